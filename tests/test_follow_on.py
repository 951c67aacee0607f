"""After the wake word's utterance, the satellite listens on for the rest.

A person who pauses mid-sentence ("I feel dizzy, ... please get the nurse") is heard to
the end: speech that begins within ``recorder.follow_on_ms`` of the end of an utterance
starts another one with no wake word (a follow-on), whose audio is the whole sentence.
Replies wait until the window has passed, so the satellite neither talks over the
person nor deafens its microphone to them, except after a complete, trusted command
(ended early at a pause), which closes the window and is answered at once; a follow-on
that is not understood, or understood as the utterance before it, gets no reply.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from satellite.actions import Action, AnswerDue, ReplyRequested
from satellite.app import SatelliteApp
from satellite.audio.chunk import AudioChunk
from satellite.audio.io import NullSink
from satellite.config import Config, validate
from satellite.events import Event, SpeechStarted, StateChanged, UtteranceEnded, WakeDetected
from satellite.frontend.recorder import FOLLOW_ON_CARRY_SECONDS, MAX_FOLLOW_ONS
from satellite.ids import BOOT_ID
from satellite.mqtt.payloads import Command
from satellite.nlu.events import IntentRecognized
from satellite.pipeline import build_pipeline
from satellite.tts.espeak import EspeakEngine
from satellite.understanding import EARLY_ENDPOINT_REASON
from satellite.understanding.dialogue import Dialogue
from tests import synth
from tests.fake_recognizer import Heard, HeardInSpeech, SaidInTurn, understanding_with

pytestmark = pytest.mark.usefixtures("need_espeak")

TOLERANCE_SECONDS = 0.15
#: A window long enough that speech after an utterance ended on silence falls in it.
WIDE = {"frontend": {"recorder": {"follow_on_ms": 2000}}}


def _conversation(
    parts: list[str], gaps: list[float], wake_before: tuple[int, ...] = (0,)
) -> tuple[synth.Float, list[tuple[float, float]]]:
    """``parts`` spoken one after another with ``gaps`` between them, 'okay nabu' before
    those indexed by ``wake_before``; the audio and each part's (start, end), s."""
    pieces = [synth.silence(1.0)]
    spans = []
    position = 1.0
    for index, part in enumerate(parts):
        if index in wake_before:
            wake = synth.espeak("okay nabu", "en-us", 150)
            pieces += [wake, synth.silence(0.45)]
            position += (len(wake) / synth.RATE) + 0.45
        speech = synth.espeak(part, "en-us", 150)
        pieces.append(speech)
        spans.append((position, position + len(speech) / synth.RATE))
        position = spans[-1][1]
        gap = gaps[index] if index < len(gaps) else 2.5
        pieces.append(synth.silence(gap))
        position += gap
    return np.concatenate(pieces), spans


def _run(audio: synth.Float, config: Config) -> list[Event]:
    return build_pipeline(config).process(synth.to_chunk(audio))


def _utterances(events: list[Event]) -> list[UtteranceEnded]:
    return [e for e in events if isinstance(e, UtteranceEnded)]


def test_speech_soon_after_an_utterance_is_heard_without_a_wake_word() -> None:
    audio, spans = _conversation(["what time is it", "and please call the nurse"], [1.2])
    events = _run(audio, validate(WIDE))
    assert len([e for e in events if isinstance(e, WakeDetected)]) == 1
    first, second = _utterances(events)
    assert first.utterance_id != second.utterance_id
    for utterance, (start, end) in zip((first, second), spans, strict=True):
        assert abs(utterance.start_seconds - start) <= TOLERANCE_SECONDS
        assert abs(utterance.end_seconds - end) <= TOLERANCE_SECONDS
    # the follow-on's audio is the whole sentence: it begins where the first one's does
    assert second.audio is not None and first.audio is not None
    assert second.audio_start_seconds == first.audio_start_seconds
    assert second.audio.end_seconds >= spans[1][1]
    # listening all along, idle once the window after the follow-on has passed
    states = [(e.state, e.timestamp_seconds) for e in events if isinstance(e, StateChanged)]
    assert [s for s, _ in states] == ["listening", "idle"]
    assert states[1][1] >= second.end_seconds + 2.0 - 0.01


@pytest.mark.parametrize(
    ("overrides", "gap"),
    [(WIDE, 2.5), ({"frontend": {"recorder": {"follow_on_ms": 0}}}, 1.2)],
    ids=["after_the_window", "window_off"],
)
def test_speech_outside_the_window_needs_the_wake_word(
    overrides: dict[str, object], gap: float
) -> None:
    audio, spans = _conversation(["what time is it", "and please call the nurse"], [gap])
    events = _run(audio, validate(overrides))
    (only,) = _utterances(events)
    assert abs(only.end_seconds - spans[0][1]) <= TOLERANCE_SECONDS
    states = [e.state for e in events if isinstance(e, StateChanged)]
    assert states == ["listening", "idle"]


def test_a_wake_word_hears_only_so_many_follow_ons() -> None:
    parts = ["what time is it", "turn on the light", "turn it off again", "call the nurse"]
    audio, spans = _conversation(parts, [1.2, 1.2, 1.2])
    heard = _utterances(_run(audio, validate(WIDE)))
    assert len(heard) == 1 + MAX_FOLLOW_ONS
    for utterance, (start, _) in zip(heard, spans, strict=False):
        assert abs(utterance.start_seconds - start) <= TOLERANCE_SECONDS


def test_a_follow_on_reaches_back_only_so_far() -> None:
    """The recognizer hears a follow-on's audio at once when it starts: after a long
    utterance it begins at most ``FOLLOW_ON_CARRY_SECONDS`` before the end of that."""
    words = "the quick brown fox jumps over the lazy dog and runs into the forest " * 2
    audio, _ = _conversation([words, "please call the nurse"], [1.2])
    first, second = _utterances(_run(audio, validate(WIDE)))
    assert first.end_seconds - first.start_seconds > FOLLOW_ON_CARRY_SECONDS + 1.0
    assert second.audio_start_seconds > first.audio_start_seconds
    assert second.audio_start_seconds >= first.timestamp_seconds - FOLLOW_ON_CARRY_SECONDS - 0.011


def test_no_follow_on_after_an_utterance_cut_at_its_longest() -> None:
    words = "the quick brown fox jumps over the lazy dog and runs into the forest " * 2
    audio, _ = _conversation([words], [])
    config = validate({"frontend": {"recorder": {"max_utterance_seconds": 2.0}}})
    (cut,) = _utterances(_run(audio, config))
    assert cut.reason == "max_length"


def test_a_wake_word_in_the_window_starts_over() -> None:
    """'okay nabu' said again just after a command is not a follow-on: the command
    after it is heard from its own onset, without the wake word in it."""
    audio, spans = _conversation(["what time is it", "turn on the light"], [1.2], (0, 1))
    events = _run(audio, validate(WIDE))
    assert len([e for e in events if isinstance(e, WakeDetected)]) == 2
    utterances = _utterances(events)
    assert abs(utterances[0].end_seconds - spans[0][1]) <= TOLERANCE_SECONDS
    assert abs(utterances[-1].start_seconds - spans[1][0]) <= TOLERANCE_SECONDS
    assert abs(utterances[-1].end_seconds - spans[1][1]) <= TOLERANCE_SECONDS
    # the wake word was taken for a follow-on first: its utterance never ended
    started = [e.utterance_id for e in events if isinstance(e, SpeechStarted)]
    assert len(started) == len(utterances) + 1


@pytest.mark.parametrize(
    ("heard", "score", "intents", "replied"),
    [
        (["what time is it", "what's the date"], 100.0, ["GetTime", "GetDate"], [0, 1]),
        # not understood: 'sorry' to the wake word's utterance, silence to the follow-on
        (["what time is it"], -100.0, [None, None], [0]),
        # understood as the utterance before it: the person only went on after a pause
        (["what time is it"], 100.0, ["GetTime", "GetTime"], [0]),
    ],
    ids=["understood", "not_understood", "understood_as_before"],
)
def test_a_follow_on_is_answered_only_when_it_asks_something_new(
    heard: list[str], score: float, intents: list[str | None], replied: list[int]
) -> None:
    config = validate(WIDE)
    audio, _ = _conversation(["what time is it", "and what's the date"], [1.2])
    understanding = understanding_with(SaidInTurn(heard, score), config)
    pipeline = build_pipeline(config, understanding=understanding)
    events = pipeline.process(synth.to_chunk(audio))
    ids = [u.utterance_id for u in _utterances(events)]
    decided = [(e.utterance_id, e.intent) for e in events if isinstance(e, IntentRecognized)]
    assert decided == list(zip(ids, intents, strict=True))
    answered = [a.utterance_id for a in pipeline.take_actions() if isinstance(a, AnswerDue)]
    assert answered == [ids[i] for i in replied]


@pytest.mark.parametrize("above", [0.5, -0.5])
def test_a_follow_on_needs_more_score_than_a_command_after_the_wake_word(above: float) -> None:
    """Heard whole, pause included, a sentence fits the grammar more easily: the first
    half of "I'm in terrible ... pain" made a light command, and the whole a fan one."""
    config = validate(WIDE)
    score = config.stt.rejection_threshold + config.stt.device_margin
    score += config.stt.follow_on_margin + above
    audio, _ = _conversation(["turn on the kitchen light", "turn off the kitchen light"], [1.2])
    recognizer = SaidInTurn(["turn on the kitchen light", "turn off the kitchen light"], score)
    understanding = understanding_with(recognizer, config)
    events = build_pipeline(config, understanding=understanding).process(synth.to_chunk(audio))
    decided = [e.intent for e in events if isinstance(e, IntentRecognized)]
    assert decided == ["HassTurnOn", "HassTurnOff" if above > 0 else None]
    assert not understanding.answers.follow_ons  # nothing kept of concluded ones


# --- replies wait -------------------------------------------------------------------------


class _Events:
    """The app's event sink: keeps them."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish_event(self, event: Event) -> None:
        self.events.append(event)


class _Sink(NullSink):
    """Tells whether anything was played (from the speaker's thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.played = threading.Event()

    def write(self, chunk: AudioChunk) -> None:
        super().write(chunk)
        self.played.set()


def test_a_reply_waits_until_the_person_has_finished() -> None:
    """'what time is it' is answered on the device at once; the answer is spoken only
    when the follow-on window has passed, though the speaker had time to say it."""
    config = validate(WIDE)
    audio, _ = _conversation(["what time is it"], [])
    understanding = understanding_with(Heard("what time is it", 100.0), config)
    pipeline = build_pipeline(config, understanding=understanding)
    sink, sent = _Sink(), _Events()
    inbox: queue.Queue[Command] = queue.Queue()
    done: list[Action] = []
    app = SatelliteApp(
        pipeline,
        sent,
        inbox,
        EspeakEngine(),
        sink,
        lambda *_: None,
        dialogue=Dialogue(),
        on_action=done.append,
    )
    seen: list[tuple[bool, bool]] = []

    def chunks() -> Iterator[AudioChunk]:
        step = 1600
        samples = synth.to_chunk(audio).to_int16()
        for start in range(0, len(samples), step):
            if any(isinstance(a, ReplyRequested) for a in done) and pipeline.hearing:
                time.sleep(0.3)  # the speaker would have begun by now
                seen.append((pipeline.hearing, sink.played.is_set()))
            yield AudioChunk.from_int16(
                samples[start : start + step], timestamp_seconds=start / synth.RATE
            )

    try:
        app.run(chunks())
        assert seen and all(hearing and not played for hearing, played in seen), seen
        assert sink.played.wait(30.0)  # ... and spoken once the window had passed
    finally:
        app.close()


def test_utterance_ids_have_no_gaps_when_follow_on_windows_pass_in_silence() -> None:
    audio, _ = _conversation(["what time is it", "turn on the kitchen light"], [], (0, 1))
    assert [u.utterance_id for u in _utterances(_run(audio, validate({})))] == [
        f"u{BOOT_ID}-1",
        f"u{BOOT_ID}-2",
    ]


def _frame(samples: np.ndarray, start: int) -> AudioChunk:
    """The 10 ms frame of 16 kHz ``samples`` from sample ``start``."""
    return AudioChunk.from_int16(samples[start : start + 160], timestamp_seconds=start / synth.RATE)


def _command_heard(
    margin: float, text: str = "turn on the kitchen light"
) -> tuple[synth.Float, HeardInSpeech, float]:
    """'okay nabu, <text>' (as test_help_requests has it), heard with ``margin`` more score
    than a device action needs: the audio, the recognizer and the end of the command's
    speech, s."""
    config = Config()
    scene = synth.wake_scene(text, "en-us", 160, lead_seconds=0.8)
    audio = scene.audio + synth.white_noise(len(scene.audio) / synth.RATE, 15.0, seed=3)
    need = config.stt.rejection_threshold + config.stt.device_margin
    heard = HeardInSpeech(text, need + margin, scene.command_span[0] + 0.1)
    return audio, heard, scene.command_span[1]


#: Score above a command's need for a confidence of ``stt.answer_at_once_confidence``
#: (0.99; see satellite/stt/base.py ``confidence``).
SURE = 4.0 * math.log(0.99 / 0.01)


@pytest.mark.parametrize(
    ("above_need", "reason", "listens_on"),
    [
        (SURE + 1.0, EARLY_ENDPOINT_REASON, False),
        (SURE - 1.0, EARLY_ENDPOINT_REASON, True),  # 0.987, as some first halves of
        # paused requests for help are heard ("I'm choking" as "what's the time")
        (6.5, EARLY_ENDPOINT_REASON, True),  # confidence 0.84: the dialogue asks again
        (5.5, "silence", True),  # short of stt.early_endpoint_margin (6)
    ],
    ids=["complete_and_sure", "complete_not_sure_enough", "doubtful", "ended_on_silence"],
)
def test_only_a_complete_sure_command_closes_the_follow_on_window(
    above_need: float, reason: str, listens_on: bool
) -> None:
    """Ended early at a pause, believed without doubt and sure enough, a command needs no
    follow-on: the pipeline stops hearing at once, so its answer is spoken at once.
    Less sure, or believed only after the full silence, it might be the first half of a
    paused request for help: the window stays open for the rest."""
    config = Config()
    audio, heard, _ = _command_heard(above_need)
    pipeline = build_pipeline(config, understanding=understanding_with(heard, config))
    samples = synth.to_chunk(audio).to_int16()
    ended: list[UtteranceEnded] = []
    for start in range(0, len(samples), 160):
        ended += _utterances(pipeline.process(_frame(samples, start)))
        answered = [a for a in pipeline.take_actions() if isinstance(a, AnswerDue)]
        if answered:  # decided (a few frames after it ended: see Understanding.advance)
            assert [u.reason for u in ended] == [reason]
            assert [a.result.intent for a in answered] == ["HassTurnOn"]
            assert pipeline.hearing is listens_on
            return
    pytest.fail("the command was never decided")


def test_a_complete_command_is_answered_before_the_window_would_have_passed() -> None:
    """Through the app: the answer to 'what time is it' (given on the device) plays while
    the microphone's clock is still inside the follow-on window that the question would
    otherwise have opened."""
    config = Config()
    audio, heard, speech_end = _command_heard(SURE + 1.0, "what time is it")
    pipeline = build_pipeline(config, understanding=understanding_with(heard, config))
    sink, done = _Sink(), list[Action]()
    app = SatelliteApp(
        pipeline,
        _Events(),
        queue.Queue(),
        EspeakEngine(),
        sink,
        lambda *_: None,
        dialogue=Dialogue(),
        on_action=done.append,
    )
    played_at: list[float] = []

    def chunks() -> Iterator[AudioChunk]:
        samples = synth.to_chunk(audio).to_int16()
        for start in range(0, len(samples), 160):
            if any(isinstance(a, ReplyRequested) for a in done) and not played_at:
                # wait for the speaker (it has a thread of its own) before more audio
                played_at.append(start / synth.RATE if sink.played.wait(20.0) else math.inf)
            yield _frame(samples, start)

    try:
        app.run(chunks())
    finally:
        app.close()
    window = config.frontend.recorder.follow_on_ms / 1000.0
    assert played_at and played_at[0] < speech_end + window, (played_at, speech_end)
