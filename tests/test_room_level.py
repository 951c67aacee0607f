"""Speech judged against the room's level, where the VAD hears speech everywhere (other
voices, a television): the utterance still ends when the person stops, and the room's
voices do not open a follow-on (satellite/frontend/level_contrast.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk
from satellite.config import Config
from satellite.events import Event, SpeechStarted, UtteranceEnded
from satellite.frontend.level_contrast import RUN_EXTRA_SECONDS
from satellite.frontend.recorder import Phase, UtteranceRecorder
from satellite.frontend.settings import RecorderSettings
from satellite.pipeline import build_pipeline
from tests import corpus, synth

ROOM_RMS = 300.0
#: The person, 16 dB above the room (as close to the satellite as it is).
PERSON_RMS = ROOM_RMS * 6.3
LEAD = 2.0
SPEECH = 1.5
TAIL = 3.0


def _recorder(against_room: bool, continuous: bool = True) -> UtteranceRecorder:
    settings = dataclasses.replace(RecorderSettings(), against_room_level=against_room)
    return UtteranceRecorder(settings, threshold=0.5, continuous=continuous)


def _room_then_person(seed: int = 0) -> tuple[synth.Float, float]:
    """The room (steady level) with the person louder in it: audio and the speech's end."""
    rng = np.random.default_rng(seed)
    room = rng.standard_normal(round((LEAD + SPEECH + TAIL) * synth.RATE)) * ROOM_RMS
    start, end = round(LEAD * synth.RATE), round((LEAD + SPEECH) * synth.RATE)
    room[start:end] += rng.standard_normal(end - start) * PERSON_RMS
    return room.astype(np.float32), LEAD + SPEECH


def _feed(
    recorder: UtteranceRecorder,
    audio: synth.Float,
    vad: np.ndarray[tuple[int], np.dtype[np.float64]],
    from_seconds: float = 0.0,
) -> list[Event]:
    """Frame by frame as the pipeline feeds it: the level first, then the VAD's word
    (``audio`` heard from ``from_seconds``)."""
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    events: list[Event] = []
    for k, offset in enumerate(range(0, len(samples) - FRAME_SAMPLES + 1, FRAME_SAMPLES)):
        frame = AudioChunk.from_int16(
            samples[offset : offset + FRAME_SAMPLES],
            timestamp_seconds=from_seconds + offset / synth.RATE,
        )
        recorder.levels.observe(frame, of_room=recorder.phase is not Phase.IN_SPEECH)
        events += recorder.update(frame, float(vad[k]))
    return events


def _ended(events: list[Event]) -> list[UtteranceEnded]:
    return [e for e in events if isinstance(e, UtteranceEnded)]


def test_speech_back_at_the_room_level_ends_the_utterance_where_the_person_stopped() -> None:
    audio, speech_end = _room_then_person()
    frames = len(audio) // FRAME_SAMPLES
    everywhere = np.ones(frames)  # the VAD hears speech in every frame: the room speaks
    trailing = RecorderSettings().trailing_silence_ms / 1000.0

    ended = _ended(_feed(_recorder(True), audio, everywhere))
    assert ended, "the utterance never ended"
    first = ended[0]
    assert first.reason == "silence"
    assert abs(first.end_seconds - speech_end) <= 0.1
    # it ends a little after the trailing silence would have, not at once
    assert first.timestamp_seconds >= speech_end + trailing + RUN_EXTRA_SECONDS - 0.05
    assert first.timestamp_seconds <= speech_end + trailing + RUN_EXTRA_SECONDS + 0.15

    # the VAD alone: still in speech when the audio ends
    assert not _ended(_feed(_recorder(False), audio, everywhere))


def test_in_a_quiet_room_or_steady_noise_the_vad_ends_it_as_before() -> None:
    audio, speech_end = _room_then_person(seed=1)
    frames = len(audio) // FRAME_SAMPLES
    vad = np.zeros(frames)
    vad[round(LEAD * 100) : round(speech_end * 100)] = 1.0  # the VAD tells the person apart
    judged = _ended(_feed(_recorder(True), audio, vad))
    alone = _ended(_feed(_recorder(False), audio, vad))
    assert [e.to_dict() for e in judged] == [e.to_dict() for e in alone]
    assert len(judged) == 1


def test_a_room_too_loud_to_tell_apart_is_left_to_the_vad() -> None:
    rng = np.random.default_rng(2)
    audio = (rng.standard_normal(round(6.0 * synth.RATE)) * ROOM_RMS).astype(np.float32)
    audio[round(2.0 * synth.RATE) : round(3.5 * synth.RATE)] *= 2.0  # only 6 dB louder
    everywhere = np.ones(len(audio) // FRAME_SAMPLES)
    assert not _ended(_feed(_recorder(True), audio, everywhere))


def test_after_the_wake_word_the_rooms_voices_open_no_follow_on() -> None:
    audio, speech_end = _room_then_person(seed=3)
    recorder = _recorder(True, continuous=False)
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    wake_frame = round(LEAD * 100) - 60  # the wake word 0.6 s before the command
    for k in range(wake_frame):  # idle: the room's level is heard before the wake word
        frame = AudioChunk.from_int16(
            samples[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES], timestamp_seconds=k / 100
        )
        recorder.levels.observe(frame, of_room=True)
        recorder.remember(frame)
    recorder.start_after_wake(wake_frame / 100)
    events: list[Event] = []
    for k in range(wake_frame, len(samples) // FRAME_SAMPLES):
        frame = AudioChunk.from_int16(
            samples[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES], timestamp_seconds=k / 100
        )
        recorder.levels.observe(frame, of_room=recorder.phase is not Phase.IN_SPEECH)
        events += recorder.update(frame, 1.0)  # the VAD hears speech everywhere
    assert len([e for e in events if isinstance(e, SpeechStarted)]) == 1
    ended = _ended(events)
    assert len(ended) == 1 and ended[0].end_seconds == pytest.approx(speech_end, abs=0.1)
    assert not recorder.active  # idle again: the room's voices are not listened to


@pytest.mark.usefixtures("need_espeak")
def test_a_command_in_babble_ends_with_the_command_through_the_real_pipeline() -> None:
    """Real VAD, real babble (other voices reading): the utterance ends after the command,
    not at its longest, and one utterance is heard."""
    voice = next(v for v in corpus.available(corpus.VOICES_ALL) if v.family == "espeak")
    said = corpus.speak(voice, "turn on the kitchen light")
    lead, tail = synth.silence(1.5), synth.silence(4.0)
    audio = np.concatenate([lead, said, tail])
    room = corpus.in_room(audio, corpus.Room("babble", 10.0), seed=4, reference=said)
    command_end = (len(lead) + len(said)) / synth.RATE

    def utterances(against_room: bool) -> list[UtteranceEnded]:
        config = Config()
        recorder = dataclasses.replace(config.frontend.recorder, against_room_level=against_room)
        config = dataclasses.replace(
            config, frontend=dataclasses.replace(config.frontend, recorder=recorder)
        )
        pipeline = build_pipeline(config, continuous=True)
        return _ended(pipeline.process(synth.to_chunk(room)) + pipeline.end_of_input())

    judged = utterances(True)
    with_command = [u for u in judged if u.start_seconds < command_end]
    assert with_command and with_command[0].reason == "silence"
    assert abs(with_command[0].end_seconds - command_end) <= 0.3
    alone = utterances(False)
    assert alone[0].end_seconds > command_end + 2.0  # the VAD alone ran on with the room


def test_an_answer_begins_with_the_person_not_with_the_rooms_loud_moments() -> None:
    """A room of voices rises 9 dB above its floor between their pauses. Waiting for the
    answer to a question (the VAD hears speech everywhere), only the person, 12 dB above
    those voices, begins it: 6 dB above the floor alone let the voices begin it."""
    rng = np.random.default_rng(4)
    burst = round(0.3 * synth.RATE)
    audio = rng.standard_normal(round((LEAD + SPEECH + TAIL) * synth.RATE)) * ROOM_RMS
    for start in range(burst, len(audio), 2 * burst):  # other voices, half the time
        audio[start : start + burst] *= 2.8
    person = slice(round(LEAD * synth.RATE), round((LEAD + SPEECH) * synth.RATE))
    audio[person] = rng.standard_normal(person.stop - person.start) * ROOM_RMS * 2.8 * 4.0
    heard = audio.astype(np.float32)
    recorder = _recorder(True, continuous=False)
    asked_at = round(1.0 * synth.RATE)  # the room heard before it listens for the answer
    everywhere = np.ones(len(heard) // FRAME_SAMPLES)
    _feed(recorder, heard[:asked_at], everywhere)  # idle: the room's levels are taken
    recorder.listen_for_answer(asked_at / synth.RATE)
    events = _feed(recorder, heard[asked_at:], everywhere, asked_at / synth.RATE)
    started = [e for e in events if isinstance(e, SpeechStarted)]
    assert started and started[0].timestamp_seconds == pytest.approx(LEAD, abs=0.1)
    ended = _ended(events)
    assert len(ended) == 1 and ended[0].end_seconds == pytest.approx(LEAD + SPEECH, abs=0.1)
