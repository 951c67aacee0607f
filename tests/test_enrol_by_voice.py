"""Enrolment by voice (MQTT ``enrol``): the satellite says each prompt, a person says it
back, and the takes are adapted to. The whole loop runs here: the app with the real
pipeline and recognizer, eSpeak NG speaking the prompts, a person (a corpus voice)
answering each prompt once the satellite has said it, and the real sphinxtrain tools."""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from satellite.actions import Action, AnswerDue
from satellite.app import SatelliteApp
from satellite.app_enrol import EnrolPlace
from satellite.audio.chunk import AudioChunk
from satellite.audio.io import NullSink
from satellite.config import Config
from satellite.enrol.inputs import recordings
from satellite.enrol.prompted import (
    HELP_WORDS,
    MIN_TAKE_SECONDS,
    PromptedEnrolment,
    spoken_prompts,
    takes_dir,
)
from satellite.events import EnrolmentChanged, Event, StateChanged, UtteranceEnded
from satellite.mqtt.payloads import Command, EnrolRequest, PayloadError, decode_inbound
from satellite.nlu.events import HelpRequested, IntentRecognized
from satellite.nlu.help_answers import HELP
from satellite.pipeline import build_pipeline
from satellite.stt.speakers import MLLR_FILE, enrolled
from satellite.tts.espeak import EspeakEngine
from satellite.understanding import build_understanding
from satellite.understanding.dialogue import Dialogue
from tests import corpus, synth
from tests.app_harness import Published
from tests.test_enrol import needs_tools

#: The person who enrols (a recorded-speech voice: not the satellite's own eSpeak NG).
PERSON = corpus.Voice("flite", "slt", 1.0)
PROMPTS = 6
#: The room heard before the enrolment is asked for, s.
ROOM_SECONDS = 3.0
#: The most audio a run may take, s (a loop that never ends fails instead of hanging).
LONGEST_SECONDS = 240.0
#: What the person says for a prompt (its event), or None: the prompt itself.
Answer = Callable[[EnrolmentChanged], str | None]


def test_the_prompts_said_hold_no_word_of_a_call_for_help() -> None:
    said = spoken_prompts(20)
    assert len(said) == 20
    for sentence in said:
        assert not HELP_WORDS & set(sentence.split()), sentence


def test_a_prompt_met_with_silence_is_asked_once_more_then_left_out(tmp_path: Path) -> None:
    session = PromptedEnrolment.start("gran", tmp_path, 3)
    assert session.ask().startswith("Please say: ")
    assert not session.heard(None, 0.0)
    assert (session.index, session.ask().startswith("I didn't hear that")) == (0, True)
    short = synth.to_chunk(synth.silence(0.3))
    assert not session.heard(short, MIN_TAKE_SECONDS - 0.1)  # a cough, not a reading
    assert session.index == 1 and session.kept == []
    session.ask()
    said = synth.to_chunk(synth.silence(1.5))
    assert session.heard(said, 1.2)
    assert session.index == 2 and len(session.kept) == 1
    lines = (session.folder / "transcripts.tsv").read_text().splitlines()
    assert lines == [f"prompt02.wav\t{spoken_prompts(3)[1]}"]
    event = session.event("prompting", 9.0)
    assert (event.prompt, event.prompts, event.kept, event.again) == (3, 3, 1, False)


@pytest.mark.parametrize(
    ("payload", "fix"),
    [
        ({"action": "start"}, "enrol.speaker"),
        ({"action": "start", "speaker": "../etc"}, "enrol.speaker"),
        ({"action": "start", "speaker": "gran", "prompts": 2}, "enrol.prompts"),
        ({"action": "begin", "speaker": "gran"}, "enrol.action"),
        ({"action": "start", "speaker": "gran", "who": 1}, "who"),
    ],
)
def test_a_bad_enrol_request_says_what_to_fix(payload: dict[str, object], fix: str) -> None:
    with pytest.raises(PayloadError, match=fix):
        decode_inbound("enrol", json.dumps(payload).encode())


def _app(config: Config, place: EnrolPlace) -> tuple[SatelliteApp, Published, list[Action]]:
    understanding = build_understanding(config, use_llm=False)
    pipeline = build_pipeline(config, understanding=understanding)
    published, done = Published(), list[Action]()
    inbox: queue.Queue[Command] = queue.Queue()
    app = SatelliteApp(
        pipeline,
        published,
        inbox,
        EspeakEngine(),
        NullSink(),
        lambda *_: None,
        dialogue=Dialogue(question=understanding.question),
        on_action=done.append,
        enrol_place=place,
    )
    return app, published, done


def _person(app: SatelliteApp, published: Published, answer: Answer) -> Iterator[AudioChunk]:
    """The microphone: a quiet room (heard a while before the enrolment is asked for, as
    by a satellite that has been running), and the person saying each prompt back once
    the satellite has said it (``answer``), until the enrolment has ended."""
    answered = 0
    at = 0.0
    while at < LONGEST_SECONDS:
        if at >= ROOM_SECONDS and not app.handled:
            app.inbox.put(EnrolRequest("start", "gran", PROMPTS))
        while not app.voice.idle():
            time.sleep(0.005)
        steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
        last = steps[-1] if steps else None
        if last is not None and last.state not in ("prompting", "adapting"):
            return
        audio = synth.silence(0.1)
        if last is not None and last.state == "prompting" and len(steps) > answered:
            asked = published.events.index(last)
            if not _listening_since(published.events[asked:]):
                audio = synth.silence(0.01)  # the prompt is still to be said
            else:
                answered = len(steps)
                said = corpus.speak(PERSON, answer(last) or last.sentence)
                audio = np.concatenate([synth.silence(0.5), said, synth.silence(1.5)])
        audio = audio + synth.white_noise(len(audio) / synth.RATE, 30.0, seed=answered)
        for chunk in synth.mic_chunks(audio):
            yield AudioChunk.from_int16(chunk.to_int16(), timestamp_seconds=at)
            at += chunk.seconds
    raise AssertionError("the enrolment did not end")


def _listening_since(events: list[Event]) -> bool:
    """Whether the satellite has begun listening (having said what it asked)."""
    return any(isinstance(e, StateChanged) and e.state == "listening" for e in events)


def _enrol(tmp_path: Path, answer: Answer) -> tuple[Published, list[Action]]:
    app, published, done = _app(Config(), EnrolPlace(str(tmp_path)))
    try:
        app.run(_person(app, published, answer))
    finally:
        app.close()
    return published, done


@needs_tools
def test_a_person_enrols_by_saying_the_prompts_back(tmp_path: Path) -> None:
    published, done = _enrol(tmp_path, lambda _: None)
    steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
    assert [e.state for e in steps] == ["prompting"] * PROMPTS + ["adapting", "done"]
    assert [e.prompt for e in steps[:PROMPTS]] == list(range(1, PROMPTS + 1))
    assert steps[-1].kept == PROMPTS
    assert enrolled(tmp_path) == ["gran"]
    assert (tmp_path / "gran" / MLLR_FILE).stat().st_size > 0
    takes = recordings([takes_dir(tmp_path, "gran")])  # what `enrol --input` would read
    assert [r.text for r in takes] == spoken_prompts(PROMPTS)
    assert all(r.seconds > 1.0 for r in takes)
    # The readings were takes, not commands: no intent published, nothing answered.
    assert not [e for e in published.events if isinstance(e, IntentRecognized)]
    assert not [a for a in done if isinstance(a, AnswerDue)]
    assert len([e for e in published.events if isinstance(e, UtteranceEnded)]) == PROMPTS


def test_a_call_for_help_during_an_enrolment_ends_it_and_goes_out(tmp_path: Path) -> None:
    def help_at_third(step: EnrolmentChanged) -> str | None:
        return "call the nurse" if step.prompt == 3 else None

    published, done = _enrol(tmp_path, help_at_third)
    steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
    # (the next prompt may have begun before the call was made out: it is cut short)
    assert [e.state for e in steps[:3]] == ["prompting"] * 3
    assert [e.state for e in steps[3:-1]] in ([], ["prompting"])
    assert steps[-1].state == "cancelled" and "help" in steps[-1].error
    answered = [a for a in done if isinstance(a, AnswerDue)]
    assert [a.result.intent for a in answered] == [HELP]
    assert len([e for e in published.events if isinstance(e, HelpRequested)]) == 1
    assert enrolled(tmp_path) == []  # nothing adapted


def test_an_enrolment_is_refused_with_a_reason_while_another_is_under_way(
    tmp_path: Path,
) -> None:
    app, published, _ = _app(Config(), EnrolPlace(str(tmp_path)))
    try:
        app.handle(EnrolRequest("start", "gran", 5))
        app.handle(EnrolRequest("start", "grandad", 5))
        app.handle(EnrolRequest("cancel"))
    finally:
        app.close()
    steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
    assert [(e.speaker, e.state) for e in steps] == [
        ("gran", "prompting"),
        ("grandad", "failed"),
        ("gran", "cancelled"),
    ]
    assert "under way" in steps[1].error
