"""Dialogue: care intents answered on the device, HA intents awaited with a fallback."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from satellite.actions import HaIntentRequested, PlaybackControl, ReplyRequested
from satellite.nlu.events import HelpRequested
from satellite.nlu.recognizer import IntentResult
from satellite.understanding.dialogue import REPLIES, Dialogue

NOW = dt.datetime(2026, 3, 14, 15, 9)


def _dialogue(timeout: float = 5.0) -> Dialogue:
    return Dialogue(ha_timeout_seconds=timeout, volume=50, now=lambda: NOW)


def _replies(events: Sequence[object]) -> list[str]:
    return [e.text for e in events if isinstance(e, ReplyRequested)]


def test_call_for_help_alerts_and_answers() -> None:
    events = _dialogue().handle(IntentResult("CallForHelp", text="i need help"), "u1", 1.0)
    alerts = [e for e in events if isinstance(e, HelpRequested)]
    assert len(alerts) == 1 and alerts[0].severity == "high" and alerts[0].text == "i need help"
    assert _replies(events) == [REPLIES["help"]]
    assert "calling for help" in REPLIES["help"]


def test_time_and_date_are_spoken() -> None:
    dialogue = _dialogue()
    assert _replies(dialogue.handle(IntentResult("GetTime"), "u1", 1.0)) == [
        "It's 3:09 in the afternoon."
    ]
    assert _replies(dialogue.handle(IntentResult("GetDate"), "u2", 2.0)) == [
        "Today is Saturday, March 14, 2026."
    ]


def test_repeat_says_the_last_answer_again() -> None:
    dialogue = _dialogue()
    assert _replies(dialogue.handle(IntentResult("Repeat"), "u0", 0.5)) == [
        REPLIES["nothing_to_repeat"]
    ]
    first = _replies(dialogue.handle(IntentResult("GetTime"), "u1", 1.0))
    assert _replies(dialogue.handle(IntentResult("Repeat"), "u2", 2.0)) == first


def test_stop_and_volume() -> None:
    dialogue = _dialogue()
    stop = dialogue.handle(IntentResult("Stop"), "u1", 1.0)
    assert [(e.action) for e in stop if isinstance(e, PlaybackControl)] == ["stop"]
    assert _replies(stop) == []
    for _ in range(10):
        events = dialogue.handle(IntentResult("VolumeUp"), "u2", 2.0)
    assert dialogue.volume == 100
    assert [e.volume for e in events if isinstance(e, PlaybackControl)] == [100]
    for _ in range(12):
        dialogue.handle(IntentResult("VolumeDown"), "u3", 3.0)
    assert dialogue.volume == 0


def test_ha_intent_waits_for_the_answer() -> None:
    dialogue = _dialogue()
    events = dialogue.handle(IntentResult("HassTurnOn", {"name": "kitchen light"}), "u1", 1.0)
    assert [(e.intent, e.slots) for e in events if isinstance(e, HaIntentRequested)] == [
        ("HassTurnOn", {"name": "kitchen light"})
    ]
    assert _replies(events) == []
    assert dialogue.waiting_for == ["u1"]
    assert dialogue.tick(3.0) == []
    assert _replies(dialogue.on_response("u1", "Turned on the light", 3.5)) == [
        "Turned on the light"
    ]
    assert dialogue.waiting_for == []
    assert dialogue.on_response("u1", "late duplicate", 4.0) == []
    assert dialogue.tick(10.0) == []


def test_ha_silence_gets_a_fallback_once() -> None:
    dialogue = _dialogue(timeout=2.0)
    dialogue.handle(IntentResult("HassTurnOff", {"area": "kitchen"}), "u1", 1.0)
    assert dialogue.tick(2.9) == []
    assert _replies(dialogue.tick(3.0)) == [REPLIES["ha_timeout"]]
    assert dialogue.tick(9.0) == []
    assert dialogue.on_response("u1", "too late", 9.5) == []


def test_not_understood() -> None:
    events = _dialogue().handle(IntentResult(None, text="blah"), "u1", 1.0)
    assert _replies(events) == [REPLIES["not_understood"]]
