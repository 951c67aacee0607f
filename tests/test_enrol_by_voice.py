"""Enrolment by voice (MQTT ``enrol``): the satellite says each prompt, a person says it
back, and the takes are adapted to. The whole loop runs here: the app with the real
pipeline and recognizer, eSpeak NG speaking the prompts, a person (a corpus voice)
answering each prompt once the satellite has said it, and the real sphinxtrain tools."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from satellite.actions import Action, AnswerDue
from satellite.app_enrol import EnrolPlace
from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.enrol.inputs import recordings
from satellite.enrol.prompted import (
    HELP_WORDS,
    MIN_TAKE_SECONDS,
    PromptedEnrolment,
    raw_take,
    spoken_prompts,
    takes_dir,
)
from satellite.events import EnrolmentChanged, ListeningTimeout, UtteranceEnded
from satellite.mqtt.payloads import Control, EnrolRequest, PayloadError, decode_inbound
from satellite.nlu.events import HelpRequested, IntentRecognized
from satellite.nlu.help_answers import HELP
from satellite.stt.speakers import MLLR_FILE, enrolled
from tests import corpus, synth
from tests.app_harness import Published
from tests.cli_support import run_command
from tests.enrol_by_voice_support import (
    LONGEST_SECONDS,
    Answer,
    enrol_app,
    enrol_by_voice,
)
from tests.enrol_support import write_wav
from tests.mqtt_support import Probe, have_mosquitto, run_config, running_broker
from tests.test_enrol import needs_tools
from tests.understand import FLOOR_RMS

#: The person who enrols (a recorded-speech voice: not the satellite's own eSpeak NG).
PERSON = corpus.Voice("flite", "slt", 1.0)
PROMPTS = 6
#: The quiet room ``run`` hears in real time, s.
QUIET_SECONDS = 6.0


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


def _enrol(tmp_path: Path, answer: Answer) -> tuple[Published, list[Action]]:
    request = EnrolRequest("start", "gran", PROMPTS)
    published, done, _ = enrol_by_voice(Config(), tmp_path, request, PERSON, answer=answer)
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
    app, published, _ = enrol_app(Config(), EnrolPlace(str(tmp_path)))
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


def test_muting_the_satellite_ends_an_enrolment_and_none_starts_while_muted(
    tmp_path: Path,
) -> None:
    app, published, _ = enrol_app(Config(), EnrolPlace(str(tmp_path)))
    try:
        app.handle(EnrolRequest("start", "gran", 5))
        app.handle(Control("mute"))
        app.handle(EnrolRequest("start", "gran", 5))
    finally:
        app.close()
    steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
    assert [e.state for e in steps] == ["prompting", "cancelled", "failed"]
    assert "muted" in steps[1].error and "unmute" in steps[2].error
    assert app.enrolment is None


@pytest.mark.skipif(
    not (have_mosquitto() and synth.have_espeak()), reason="needs mosquitto and espeak-ng"
)
def test_pocket_satellite_run_takes_an_enrol_request_from_the_broker(tmp_path: Path) -> None:
    """The product path: ``pocket-satellite run`` on a real-time quiet room, a real
    Mosquitto; ``enrol`` published by "Home Assistant" comes back as ``enrolment``."""
    quiet = tmp_path / "quiet.wav"
    write_wav(quiet, synth.white_noise(QUIET_SECONDS, 15.0))
    config = tmp_path / "satellite.yaml"
    base = "pocket_satellite/pocket_satellite"
    with running_broker(tmp_path / "broker") as broker:
        speakers = tmp_path / "speakers"
        extra = f"stt:\n  speakers_dir: {speakers}\n"
        config.write_text(run_config(broker.port, tmp_path, 'output: "null"', extra))
        probe = Probe(broker.port, (f"{base}/#",))
        args = ["run", "--config", str(config), "--input", str(quiet), "--realtime"]
        outcome: list[tuple[int, list[dict[str, object]], str]] = []
        runner = threading.Thread(target=lambda: outcome.append(run_command(*args)))
        try:
            runner.start()
            probe.wait_for(f"{base}/info", timeout=60)  # online: its commands subscribed
            request = {"action": "start", "speaker": "gran", "prompts": 5}
            probe.publish(f"{base}/enrol", json.dumps(request))
            first = probe.wait_for(f"{base}/enrolment").json()
            runner.join(QUIET_SECONDS + 60)
        finally:
            probe.close()
    assert [code for code, _, _ in outcome] == [0], outcome
    assert (first["state"], first["speaker"], first["prompt"], first["prompts"]) == (
        "prompting",
        "gran",
        1,
        5,
    )
    assert first["sentence"] == spoken_prompts(5)[0]
    assert {"id", "time"} <= set(first)  # through the link's envelope
    assert takes_dir(speakers, "gran").is_dir()


def test_a_take_is_the_microphones_audio_over_the_span_heard() -> None:
    mic = (np.arange(48000) % 2000 - 1000).astype(np.int16)  # 3 s, every sample known
    raw = [
        AudioChunk.from_int16(mic[i : i + 1600], timestamp_seconds=i / 16000)
        for i in range(0, len(mic), 1600)
    ]
    heard = AudioChunk.from_int16(np.zeros(16000, np.int16), timestamp_seconds=1.25)
    take, later = raw_take(heard, raw)
    assert take is not None and take.timestamp_seconds == 1.25
    assert np.array_equal(take.to_int16(), mic[20000:36000])
    assert later[0].timestamp_seconds == 2.2 and later[-1].end_seconds == 3.0
    # not all of its span kept (the enrolment began during it): the take as heard
    assert raw_take(heard, raw[15:])[0] is heard
    assert raw_take(None, raw) == (None, raw)


def test_a_take_that_cannot_be_kept_ends_the_enrolment_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_room_left(_: Path, __: AudioChunk) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("satellite.enrol.prompted.write_wav", no_room_left)
    published, _ = _enrol(tmp_path, lambda _: None)
    steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
    assert [e.state for e in steps] == ["prompting", "failed"]
    assert "cannot keep a take" in steps[-1].error and "No space left" in steps[-1].error


@pytest.mark.parametrize("continuous", [False, True], ids=["wake-word", "listening-on"])
def test_a_prompt_nobody_answers_times_out(tmp_path: Path, continuous: bool) -> None:
    """A prompt nobody answers times out and is asked once more, then left out, so an
    enrolment left alone ends (too few sentences heard) instead of waiting for ever:
    also before any take was heard (the first prompt's timeout had been dropped), and
    listening on without a wake word (where the recorder never times out by itself;
    it does for an answer now)."""
    app, published, _ = enrol_app(Config(), EnrolPlace(str(tmp_path)), continuous)
    request = EnrolRequest("start", "gran", 5)

    def nobody() -> Iterator[AudioChunk]:
        at = 0.0
        while at < LONGEST_SECONDS:
            if not app.handled:
                app.inbox.put(request)
            while not app.voice.idle():
                time.sleep(0.005)
            steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
            if steps and steps[-1].state not in ("prompting", "adapting"):
                return
            room = synth.white_noise(0.1, FLOOR_RMS, seed=round(at * 10))
            for chunk in synth.mic_chunks(room):
                yield AudioChunk.from_int16(chunk.to_int16(), timestamp_seconds=at)
                at += chunk.seconds

    try:
        app.run(nobody())
    finally:
        app.close()
    steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
    # each prompt asked twice (the second time "I didn't hear that"), then given up
    assert [e.state for e in steps] == ["prompting"] * 10 + ["failed"]
    assert [e.prompt for e in steps[:10:2]] == [1, 2, 3, 4, 5]
    assert "only 0 of 5" in steps[-1].error
    timeouts = [e for e in published.events if isinstance(e, ListeningTimeout)]
    assert len(timeouts) == 10
