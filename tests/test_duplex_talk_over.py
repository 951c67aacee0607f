"""Speech over a reply pauses it and is heard (issue 19, item 2).

The real frame loop with echo cancellation and hearing while speaking on, real
understanding (PocketSphinx, the intent templates), the satellite's own eSpeak NG voice
through a simulated room (tests/room.py), the echo 6 dB louder than the person.
"""

from __future__ import annotations

import dataclasses
import queue
import time
from collections.abc import Iterator

import numpy as np
import pytest

from satellite.actions import (
    Action,
    AnswerDue,
    BargeIn,
    ReplyPaused,
    ReplyResumed,
    StopSaid,
)
from satellite.app import SatelliteApp
from satellite.audio.chunk import AudioChunk
from satellite.config import Config, validate
from satellite.events import SpeechStarted, StateChanged, UtteranceEnded
from satellite.mqtt.payloads import SayRequest
from satellite.nlu.recognizer import IntentResult
from satellite.pipeline import Pipeline, build_pipeline
from satellite.supervisor import Supervisor
from satellite.tts.espeak import EspeakEngine
from satellite.understanding import build_understanding
from satellite.while_speaking import WhileSpeaking
from tests import corpus, synth
from tests.duplex_room import AddsActions, Replying, Turn, reply_audio
from tests.room import Float, Room
from tests.test_duplex import PacedSink, Published

pytestmark = pytest.mark.usefixtures("need_espeak")
ECHO_ON = {"frontend": {"echo": {"enabled": True}}}
REPLIES = (
    "The kitchen light is on.",
    "It is twenty past four in the afternoon.",
    "Your next appointment is on Tuesday at ten in the morning with doctor Smith.",
    "I have called the nurse, someone is coming to help you now.",
)
PERSON = corpus.Voice("flite", "slt", 1.0)
TIME = "what time is it"
#: A request for help with a pause mid-way: "call ... the nurse".
FIRST_HALF, SECOND_HALF = "i need", "some help"


@pytest.fixture(scope="module")
def config() -> Config:
    return validate(ECHO_ON)


@pytest.fixture(scope="module")
def pipeline(config: Config) -> Pipeline:
    return build_pipeline(config, understanding=build_understanding(config, use_llm=False))


@pytest.fixture(scope="module")
def replies() -> list[Float]:
    return [reply_audio(text) for text in REPLIES]


def test_the_satellites_own_replies_never_open_an_utterance(
    pipeline: Pipeline, replies: list[Float]
) -> None:
    for number, room in enumerate((Room(20, 0.2, seed=1), Room(200, 0.6, seed=2))):
        replying = Replying(pipeline, room, seed=number)
        for reply in replies + replies[:2]:  # the first ones while the canceller learns
            turn = replying.reply(reply)
            assert turn.stopped_at is None, (room, turn.actions)
            assert not [e for e in turn.events if isinstance(e, SpeechStarted)]


def _talk_over(pipeline: Pipeline, replies: list[Float], text: str) -> Turn:
    """``text`` said over a long reply in a clean-ish room, once the canceller knows it."""
    if not PERSON.available:
        pytest.skip(f"{PERSON.label} is not installed (scripts/bootstrap.sh)")
    replying = Replying(pipeline, Room(20, 0.2, seed=3))
    for reply in replies[:2]:  # the canceller learns the room
        assert replying.reply(reply).stopped_at is None
    said = corpus.speak(PERSON, text).astype(np.float64)
    return replying.reply(replies[2], said, at_seconds=1.5, after_seconds=3.0)


def _heard(turn: Turn) -> None:
    """The reply stopped playing soon after the person began, and what they said came out
    as one utterance, understood as a command that is asked about once more (what is
    left of the echo under it may have made it another command: it varies with a frame
    of onset; the person says it again with the reply stopped)."""
    assert turn.stopped_at is not None and turn.person is not None
    assert turn.person[0] < turn.stopped_at <= turn.person[0] + 0.3  # the person, soon
    (utterance,) = [e for e in turn.events if isinstance(e, UtteranceEnded)]
    (answer,) = [a for a in turn.actions if isinstance(a, AnswerDue)]
    assert answer.utterance_id == utterance.utterance_id
    assert answer.result.intent is not None and answer.doubtful
    assert not [a for a in turn.actions if isinstance(a, ReplyResumed)]  # answered instead


def test_a_sentence_over_a_reply_pauses_it_and_is_heard(
    replies: list[Float],
) -> None:
    """The talk-over check alone (stop words nobody says): the reply pauses, the
    sentence is heard."""
    config = validate({"frontend": {"echo": {"enabled": True, "stop_words": ["xylophone"]}}})
    understanding = build_understanding(config, use_llm=False)
    turn = _talk_over(build_pipeline(config, understanding=understanding), replies, TIME)
    assert turn.paused
    (paused,) = [a for a in turn.actions if isinstance(a, ReplyPaused)]
    assert turn.person is not None and paused.onset_seconds <= paused.timestamp_seconds
    _heard(turn)


def test_a_stop_word_spotted_in_a_sentence_still_lets_it_be_heard(
    pipeline: Pipeline, replies: list[Float]
) -> None:
    """The stop-word check spots a stop word in most speech over a reply ("what time
    is it" -> "shut up stop"): the reply stops, and the sentence is still heard."""
    turn = _talk_over(pipeline, replies, TIME)
    _heard(turn)


def test_with_hearing_while_speaking_off_nothing_pauses(replies: list[Float]) -> None:
    config = validate({"frontend": {"echo": {"enabled": True, "hear_while_speaking": False}}})
    pipeline = build_pipeline(config)
    replying = Replying(pipeline, Room(20, 0.2, seed=3))
    said = corpus.speak(corpus.Voice("espeak", "en-us+f3", 140), "what time is it")
    for reply in replies[:2]:
        replying.reply(reply)
    turn = replying.reply(replies[2], said.astype(np.float64), at_seconds=1.5)
    assert turn.stopped_at is None
    assert not [e for e in turn.events if isinstance(e, SpeechStarted)]


def _first_half(pause_seconds: float) -> Float:
    """ "Okay Nabu, I feel dizzy" ... (a pause): the first half of a request for help."""
    wake = synth.espeak("okay nabu", "en-us", 150).astype(np.float64)
    dizzy = corpus.speak(PERSON, "i feel dizzy").astype(np.float64)
    dizzy = dizzy * np.sqrt(np.mean(wake**2) / np.mean(dizzy**2))
    gap, pause = np.zeros(int(0.45 * 16000)), np.zeros(int(pause_seconds * 16000))
    audio: Float = np.concatenate([np.zeros(8000), wake, gap, dizzy, pause])
    return audio


@pytest.mark.parametrize(("data", "holds"), [({}, True), (ECHO_ON, False)], ids=["off", "on"])
def test_the_follow_on_window_holds_replies_only_without_hearing_while_speaking(
    data: dict[str, object], holds: bool
) -> None:
    """With hearing while speaking on, a reply may start while the recorder waits for a
    follow-on: the person going on is heard over it (echo off: replies wait, as today)."""
    if not PERSON.available:
        pytest.skip(f"{PERSON.label} is not installed (scripts/bootstrap.sh)")
    pipeline = build_pipeline(validate(data))
    events = pipeline.process(synth.to_chunk(_first_half(0.8).astype(np.float32)))
    assert [e for e in events if isinstance(e, UtteranceEnded)]
    assert pipeline.stages.recorder.following_on
    assert pipeline.hearing is holds


def _answer(intent: str | None) -> AnswerDue:
    result = IntentResult(text="x", intent=intent, slots={}, confidence=1.0, source="template")
    return AnswerDue(1.0, utterance_id="u1", result=result)


@pytest.mark.parametrize(
    ("taken", "resumed", "kept"),
    [
        ([], True, 0),  # nothing heard: the reply goes on
        ([_answer(None)], True, 0),  # not understood: no "sorry", the reply goes on
        ([_answer("GetTime")], False, 1),  # understood: it answers instead
        ([StopSaid(1.0, word="stop")], False, 1),  # a stop word: stopped for good
    ],
    ids=["nothing", "not_understood", "understood", "stop_word"],
)
def test_a_paused_reply_is_resumed_only_when_nothing_answered(
    config: Config, taken: list[Action], resumed: bool, kept: int
) -> None:
    voice = WhileSpeaking(build_pipeline(config).stages, Supervisor())
    voice.set_speaking(True)
    voice.pause(1.0, 1.2)
    assert not voice.speaking
    out = voice.settle(list(taken), hearing=True, settled=True, at_seconds=2.0)
    assert len(out) == kept and voice.paused_at == 1.0  # still hearing: not yet decided
    out = voice.settle([], hearing=False, settled=True, at_seconds=3.0)
    assert [isinstance(a, ReplyResumed) for a in out] == ([True] if resumed else [])
    assert voice.paused_at is None
    assert not [a for a in out if isinstance(a, BargeIn)]


@pytest.mark.parametrize(
    ("intent", "ask_again", "doubtful"),
    [
        ("GetTime", True, True),  # asked about once more
        ("CallForHelp", True, True),  # "Do you need help?": unanswered, it goes out
        ("Stop", True, False),  # what the person wants: stopped
        ("HassNevermind", True, False),
        ("GetTime", False, False),  # frontend.echo.ask_again_over_reply off
    ],
)
def test_a_command_heard_over_a_reply_is_asked_about_once_more(
    intent: str, ask_again: bool, doubtful: bool
) -> None:
    echo = {"enabled": True, "ask_again_over_reply": ask_again}
    voice = WhileSpeaking(
        build_pipeline(validate({"frontend": {"echo": echo}})).stages, Supervisor()
    )
    voice.set_speaking(True)
    (heard,) = voice.settle([_answer(intent)], hearing=True, settled=True, at_seconds=1.0)
    assert isinstance(heard, AnswerDue) and heard.doubtful is False  # not over a reply
    voice.set_speaking(True)
    voice.pause(1.0, 1.2)
    (heard,) = voice.settle([_answer(intent)], hearing=True, settled=True, at_seconds=2.0)
    assert isinstance(heard, AnswerDue) and heard.doubtful is doubtful
    assert heard.result.intent == intent
    (already,) = voice.settle(
        [dataclasses.replace(_answer(intent), doubtful=True)], True, True, 2.1
    )
    assert isinstance(already, AnswerDue) and already.doubtful  # never made sure


class PausesOnce(AddsActions):
    """The real pipeline, plus someone heard over the first reply and nothing understood
    of it: how the app carries out ``ReplyPaused`` and ``ReplyResumed`` (the pipeline's
    side is tested above)."""

    def __init__(self, pipeline: Pipeline) -> None:
        super().__init__(pipeline)
        self.paused = self.resumed = False

    def more(self) -> list[Action]:
        if self.pipeline.speaking and not self.paused:
            self.paused = True
            return [ReplyPaused(0.0, onset_seconds=0.0)]
        if self.paused and not self.resumed and not self.pipeline.speaking:
            self.resumed = True
            return [ReplyResumed(0.0)]
        return []


def test_the_app_stops_a_paused_reply_and_says_it_again_when_resumed() -> None:
    published = Published()
    application = SatelliteApp(
        PausesOnce(build_pipeline(Config())),  # type: ignore[arg-type]
        published,
        queue.Queue(),
        EspeakEngine(),
        PacedSink(),
        published.publish,
    )
    try:
        application.handle(SayRequest("The kitchen light is on.", "r1"))

        def microphone() -> Iterator[AudioChunk]:
            for step in range(600):  # until the reply has been said again
                states = [e.state for e in published.events if isinstance(e, StateChanged)]
                if states.count("responding") >= 2 and states[-1] == "idle":
                    return
                time.sleep(0.005)
                yield AudioChunk(16000, 2, 1, bytes(320), step * 0.01)

        application.run(microphone())
    finally:
        application.close()
    states = [e.state for e in published.events if isinstance(e, StateChanged)]
    assert states.count("responding") == 2  # stopped, then said again
    done = []
    while not published.raw.empty():
        done.append(published.raw.get())
    assert len(done) == 1 and b'"stopped"' in done[0][1]  # its request was answered once
