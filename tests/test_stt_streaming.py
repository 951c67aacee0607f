"""Streaming recognition in the frame loop: early endpoint, a pause mid-command, hearing.

Commands are spoken after the wake word by eSpeak NG over a faint noise floor and fed
through the pipeline; times are audio times, never wall-clock.
"""

from __future__ import annotations

import dataclasses
import math
from functools import cache
from typing import Any

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.events import Event, UtteranceEnded
from satellite.nlu.events import Transcript
from satellite.pipeline import build_pipeline
from satellite.stt.base import SttResult
from satellite.stt.hearing import MicHistory, hear_denoised, snr_db
from satellite.stt.sphinx_scores import word_score
from satellite.understanding import EARLY_ENDPOINT_REASON, Understanding, build_understanding
from tests import synth
from tests.fake_recognizer import Heard, decide, understanding_with
from tests.understand import FLOOR_RMS, intents, replay

pytestmark = pytest.mark.usefixtures("need_espeak")


@cache
def _config(**stt: Any) -> Config:
    base = Config()
    return dataclasses.replace(base, stt=dataclasses.replace(base.stt, **stt))


def _run(audio: synth.Float, config: Config) -> tuple[list[Event], Understanding]:
    return replay(audio, config, continuous=False)


def _with_floor(audio: synth.Float, seed: int = 0) -> synth.Float:
    return audio + synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed)


def _ended(events: list[Event]) -> list[UtteranceEnded]:
    return [e for e in events if isinstance(e, UtteranceEnded)]


@pytest.mark.parametrize(
    ("text", "voice", "intent"),
    [
        ("turn on the kitchen light", "en-us", "HassTurnOn"),
        ("what time is it", "en-gb-x-rp", "GetTime"),
        ("call the nurse", "en-us+m3", "CallForHelp"),
    ],
)
def test_a_whole_command_ends_after_the_short_silence(text: str, voice: str, intent: str) -> None:
    scene = synth.wake_scene(text, voice, 160)
    config = _config()
    events, _ = _run(_with_floor(scene.audio), config)
    (ended,) = _ended(events)
    assert ended.reason == EARLY_ENDPOINT_REASON
    assert [i.intent for i in intents(events)] == [intent]
    # decided well before the full trailing silence would have passed
    trailing = config.frontend.recorder.trailing_silence_ms / 1000.0
    waited = ended.timestamp_seconds - scene.command_end_seconds
    assert config.stt.early_endpoint_ms / 1000.0 <= waited < trailing


def test_without_early_endpoint_the_full_silence_ends_it() -> None:
    scene = synth.wake_scene("turn on the kitchen light", "en-us", 160)
    config = _config(early_endpoint_ms=0)
    events, _ = _run(_with_floor(scene.audio), config)
    (ended,) = _ended(events)
    assert ended.reason == "silence"
    assert ended.timestamp_seconds - scene.command_end_seconds >= (
        config.frontend.recorder.trailing_silence_ms / 1000.0
    )
    assert [i.intent for i in intents(events)] == ["HassTurnOn"]


@pytest.mark.parametrize(
    ("first", "rest", "voice", "intent", "text"),
    [
        (
            "set a timer for",
            "ten minutes",
            "en-gb-x-rp",
            "HassStartTimer",
            "set a timer for ten minutes",
        ),
        ("please call", "the nurse", "en-gb-x-rp", "CallForHelp", "please call the nurse"),
    ],
)
def test_a_pause_inside_a_command_does_not_cut_it(
    first: str, rest: str, voice: str, intent: str, text: str
) -> None:
    """A search ended at the pause may fill the silence with words ("set a timer for"
    came out as "set a timer for two hour"): words begun after the speech ended are not
    believed, the search goes on (decoded again from the start) and the whole command
    is heard."""
    audio = np.concatenate(
        [
            synth.silence(1.0),
            synth.espeak("okay nabu", voice, 160),
            synth.silence(0.45),
            synth.espeak(first, voice, 160),
            synth.silence(0.45),  # longer than the early endpoint, shorter than the timeout
            synth.espeak(rest, voice, 160),
            synth.silence(1.5),
        ]
    )
    events, understanding = _run(_with_floor(audio), _config())
    (ended,) = _ended(events)
    (found,) = intents(events)
    assert found.intent == intent
    report = understanding.reports[ended.utterance_id]
    assert report.stt is not None and report.stt.text == text


def test_a_loud_room_is_heard_denoised_and_a_quiet_one_raw() -> None:
    scene = synth.wake_scene("turn off the bedroom lamp", "en-us", 160)
    quiet = _with_floor(scene.audio)
    loud = synth.add_noise(quiet, 5.0, seed=3, reference=quiet)
    _, understanding = _run(quiet, _config())
    assert understanding.hearing.denoised is False
    _, understanding = _run(loud, _config())
    assert understanding.hearing.denoised is True
    _, understanding = _run(loud, _config(hearing="raw"))
    assert understanding.hearing.denoised is False


def _noise_after_the_wake_word(text: str, snr_db: float) -> synth.Float:
    """A quiet room while the wake word is said, then noise at ``snr_db`` to the command."""
    scene = synth.wake_scene(text, "en-us", 160, tail_seconds=1.2)
    audio = _with_floor(scene.audio)
    start, end = (round(t * synth.RATE) for t in scene.command_span)
    onset = start - round(0.2 * synth.RATE)
    command = audio[start:end]
    silent = np.zeros(len(audio) - onset, dtype=np.float32)
    noise = synth.add_noise(silent, snr_db, seed=5, reference=command)
    audio[onset:] += noise
    return audio


def test_a_room_that_proves_loud_is_heard_again_denoised() -> None:
    """Judged quiet from the wake word, the room is loud by the end of the command: the
    command is searched again, denoised, and needs the loud room's score."""
    audio = _noise_after_the_wake_word("what time is it", 8.0)
    understanding = build_understanding(_config(), use_llm=False)
    searches: list[float] = []
    start = understanding.recognizer.start

    def spied(seconds: float, context: AudioChunk | None = None) -> None:
        searches.append(seconds)  # a spy: the real search runs
        start(seconds, context)

    setattr(understanding.recognizer, "start", spied)  # noqa: B010
    pipeline = build_pipeline(_config(), understanding=understanding)
    events = pipeline.process(synth.to_chunk(audio)) + pipeline.end_of_input()
    assert understanding.hearing.loud is True and understanding.hearing.denoised is True
    assert len(searches) == 2 and searches[0] == searches[1]  # the same audio, again
    assert len([e for e in events if isinstance(e, Transcript)]) == 1
    _, understanding = _run(audio, _config(hearing="raw"))
    assert (
        understanding.hearing.loud is True and understanding.hearing.denoised is False
    )  # as configured
    _, understanding = _run(_with_floor(synth.wake_scene("what time is it").audio), _config())
    assert understanding.hearing.loud is False and understanding.hearing.denoised is False


def test_snr_estimate_follows_the_mix() -> None:
    # what the satellite weighs: the wake word with the pauses around it, and the
    # command's first syllables
    scene = synth.wake_scene("turn on the light", "en-us", 160, lead_seconds=0.5)
    heard = scene.audio[: round((scene.command_start_seconds + 0.3) * synth.RATE)]
    for snr in (5.0, 15.0, 30.0):
        mixed = synth.add_noise(heard, snr, seed=1)
        estimate = snr_db(synth.to_chunk(mixed).samples)
        # the loudest frames sit a few dB above the speech's average level
        assert snr < estimate < snr + 12.0, (snr, estimate)
    assert snr_db(b"") == math.inf  # too short to tell: counts as quiet
    assert hear_denoised("raw", 5.0, 25.0) is False
    assert hear_denoised("denoised", math.inf, 25.0) is True
    assert hear_denoised("auto", 5.0, 25.0) is True
    assert hear_denoised("auto", math.inf, 25.0) is False


def test_mic_history_keeps_both_versions_by_time() -> None:
    history = MicHistory(seconds=0.05)
    for index in range(10):
        raw = AudioChunk.from_int16(np.full(160, index, np.int16), timestamp_seconds=index / 100)
        history.add(
            raw,
            AudioChunk.from_int16(
                np.full(160, -index, np.int16), timestamp_seconds=raw.timestamp_seconds
            ),
        )
    processed = AudioChunk.from_int16(np.zeros(160, np.int16), timestamp_seconds=0.09)
    assert np.frombuffer(history.get(processed).samples, np.int16)[0] == 9
    assert np.frombuffer(history.get(processed, denoised=True).samples, np.int16)[0] == -9
    old = AudioChunk.from_int16(np.zeros(160, np.int16), timestamp_seconds=0.01)
    assert history.get(old) is old  # forgotten: the processed frame stands in
    before = history.before(0.09, 0.03)
    assert before is not None and before.num_frames == 3 * 160
    assert history.before(0.0, 1.0) is None


@pytest.mark.parametrize(
    ("text", "score", "loud", "believed"),
    [
        ("what time is it", -33.0, False, True),  # above the threshold (-34)
        ("turn on the kitchen light", -33.0, False, False),  # a device action needs -26
        ("turn on the kitchen light", -25.0, False, True),
        ("what time is it", -27.0, True, False),  # a loud room needs 8 more: -26
        ("turn on the kitchen light", -19.0, True, False),  # loud + device: -18
        ("turn on the kitchen light", -17.0, True, True),
        ("what time is it", -35.0, False, False),
    ],
)
def test_score_needed_depends_on_the_intent_and_the_room(
    text: str, score: float, loud: bool, believed: bool
) -> None:
    understanding = understanding_with(Heard(text, score))
    understanding.hearing.take_up(None, 0.0, loud=loud)
    transcript, intent = decide(understanding, 1.0, 1.0)
    assert transcript.in_grammar is believed
    assert (intent.intent is not None) is believed


def test_a_word_score_counts_the_phones_over_its_frames_pro_rata() -> None:
    # a 10-frame word scoring -100 against phones of -40 (frames 0-9) and -60 (10-29):
    # the loop's score over frames 5-14 is half of one plus a quarter of the other
    phones = [(0, 9, -40.0), (10, 29, -60.0), (30, 39, -999.0)]
    assert word_score(5, 14, -100.0, phones) == pytest.approx((-100.0 - (-20.0 - 15.0)) / 10)
    assert word_score(5, 14, None, phones) is None
    assert word_score(5, 14, -100.0, [(0, 20, None)]) is None


def _decoded(text: str, word_weight: float, voice: str = "en-us") -> SttResult:
    config = _config(word_weight=word_weight)
    (report,) = replay(_with_floor(synth.wake_scene(text, voice, 160).audio), config, False)[
        1
    ].reports.values()
    assert report.stt is not None
    return report.stt


def test_the_utterance_score_adds_the_second_worst_word() -> None:
    plain = _decoded("turn on the kitchen light", 0.0)
    weighted = _decoded("turn on the kitchen light", 0.25)
    assert [w.word for w in weighted.words] == ["turn", "on", "the", "kitchen", "light"]
    scores = sorted(w.score for w in weighted.words if w.score is not None)
    assert len(scores) == 5
    assert plain.score_per_frame is not None and weighted.score_per_frame is not None
    assert weighted.score_per_frame == pytest.approx(
        plain.score_per_frame + 0.25 * scores[1], abs=0.01
    )


def test_speech_from_outside_the_domain_has_words_that_fit_badly() -> None:
    """Forced into the grammar, prose leaves words far below the phone loop; the words
    of a command heard right fit it closely."""
    command = _decoded("set the kitchen light to red", 0.25, "en-gb-x-rp")
    prose = _decoded("my grandson visited me on sunday afternoon", 0.25, "en-gb-x-rp")
    second_worst = [
        sorted(w.score for w in r.words if w.score is not None)[1] for r in (command, prose)
    ]
    assert second_worst[0] > second_worst[1] + 10
    assert command.in_grammar and not prose.in_grammar
