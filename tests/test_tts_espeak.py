"""The in-process eSpeak NG engine: streaming, cancelling, voices, settings, bad input."""

# ruff: noqa: RUF001 - IPA phonemes look like Latin letters

from __future__ import annotations

import itertools

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.tts.base import UnknownVoiceError
from satellite.tts.engines import make_engine
from satellite.tts.espeak import EspeakEngine, espeak_worker
from satellite.tts.settings import TtsSettings

SENTENCE = "The kitchen light is now on."
LONG = " ".join(["The quick brown fox jumps over the lazy dog."] * 40)


def _audio(chunks: list[AudioChunk]) -> np.ndarray[tuple[int], np.dtype[np.float64]]:
    return np.concatenate([c.to_int16() for c in chunks]).astype(np.float64)


def _rms(chunks: list[AudioChunk]) -> float:
    return float(np.sqrt(np.mean(np.square(_audio(chunks)))))


def test_a_sentence_streams_as_many_chunks_with_running_timestamps() -> None:
    engine = EspeakEngine()
    chunks = list(engine.synthesize(SENTENCE))
    assert len(chunks) > 10
    assert {(c.rate_hz, c.width_bytes, c.channels) for c in chunks} == {(22050, 2, 1)}
    assert chunks[0].timestamp_seconds == 0.0
    for before, after in itertools.pairwise(chunks):
        assert after.timestamp_seconds == pytest.approx(before.end_seconds)
    assert 1.0 < sum(c.seconds for c in chunks) < 3.0
    assert _rms(chunks) > 1000


def test_stopping_the_iteration_cancels_the_synthesis(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = EspeakEngine()
    one_sentence = sum(1 for _ in engine.synthesize(LONG.split(".", maxsplit=1)[0] + "."))
    calls: list[tuple[bytes, int]] = []  # (text, samples) of every callback eSpeak makes
    worker = espeak_worker()
    original = worker._on_audio

    def counting(wav: object, num_samples: int, events: object) -> int:
        calls.append((worker._job.text if worker._job else b"", num_samples))
        return original(wav, num_samples, events)

    monkeypatch.setattr(worker, "_on_audio", counting)
    iterator = engine.synthesize(LONG)  # 40 sentences
    next(iterator)
    iterator.close()
    after = list(engine.synthesize(SENTENCE))  # the worker is free again at once
    jobs = list(dict.fromkeys(job for job, _ in calls))
    assert jobs == [LONG.split(". ")[0].encode() + b".", SENTENCE.encode()]  # no more of LONG
    long_blocks = sum(1 for job, samples in calls if job == jobs[0] and samples > 0)
    assert 1 <= long_blocks <= one_sentence
    assert 1.0 < sum(c.seconds for c in after) < 3.0


def test_empty_and_blank_text_give_no_audio() -> None:
    engine = EspeakEngine()
    assert list(engine.synthesize("")) == []
    assert list(engine.synthesize(" \n\t\x00\x07 ")) == []


def test_control_characters_are_read_as_spaces() -> None:
    engine = EspeakEngine()
    clean = sum(c.seconds for c in engine.synthesize("Hello there my friend."))
    dirty = sum(c.seconds for c in engine.synthesize("Hello\x00there\x1b my\x07 friend.\x7f"))
    assert dirty == pytest.approx(clean, rel=0.1)


def test_an_unknown_voice_is_a_clear_error_and_the_engine_goes_on() -> None:
    engine = EspeakEngine()
    with pytest.raises(UnknownVoiceError, match=r"'xx-nonsense'.*en-us.*--list-voices"):
        list(engine.synthesize("Hello.", "xx-nonsense"))
    assert sum(c.seconds for c in engine.synthesize("Hello.")) > 0.3


def test_voices_variants_and_phonemes() -> None:
    engine = EspeakEngine()
    voices = engine.voices()
    assert len(voices) > 50
    assert "en-us" in voices
    for name in voices[::15]:  # every listed name is one the engine takes
        assert list(engine.synthesize("", name)) is not None
    assert sum(c.seconds for c in engine.synthesize("Hi.", "en+f3")) > 0.1
    assert engine.phonemes("Hello world") == "həlˈoʊ wˈɜːld"


def test_rate_and_volume_change_the_audio() -> None:
    slow = list(EspeakEngine(rate_wpm=120).synthesize(SENTENCE))
    fast = list(EspeakEngine(rate_wpm=300).synthesize(SENTENCE))
    assert sum(c.seconds for c in fast) < 0.7 * sum(c.seconds for c in slow)
    quiet = _rms(list(EspeakEngine(volume=40).synthesize(SENTENCE)))
    loud = _rms(list(EspeakEngine(volume=160).synthesize(SENTENCE)))
    assert quiet < 0.5 * loud


def _fundamental_hz(audio: np.ndarray[tuple[int], np.dtype[np.float64]]) -> float:
    """Median F0 of the louder 40 ms frames (YIN's cumulative mean normalised difference)."""
    rate, n = 22050, 882
    starts = range(0, len(audio) - 2 * n, n)
    energy = np.array([np.mean(np.square(audio[i : i + n])) for i in starts])
    taus = np.arange(1, rate // 60)
    found: list[float] = []
    for i, e in zip(starts, energy, strict=True):
        if e < np.percentile(energy, 60):
            continue
        frame = audio[i : i + 2 * n]
        diff = np.array([np.sum(np.square(frame[:n] - frame[tau : tau + n])) for tau in taus])
        normalised = diff * taus / np.cumsum(diff)
        below = np.nonzero(normalised[rate // 500 :] < 0.2)[0]
        if len(below):
            tau = rate // 500 + int(below[0])
            while tau + 1 < len(normalised) and normalised[tau + 1] < normalised[tau]:
                tau += 1
            found.append(rate / taus[tau])
    return float(np.median(found))


def test_pitch_changes_the_voice() -> None:
    def fundamental(pitch: int) -> float:
        chunks = list(EspeakEngine(pitch=pitch).synthesize("Aaah, that is a nice day."))
        return _fundamental_hz(_audio(chunks))

    low, high = fundamental(10), fundamental(90)
    assert 50 < low < 120
    assert high > 1.5 * low


def test_make_engine_uses_the_settings() -> None:
    engine = make_engine(TtsSettings(rate_wpm=200, pitch=30, volume=80))
    assert isinstance(engine, EspeakEngine)
    assert (engine.voice, engine.rate_wpm, engine.pitch, engine.volume) == (
        "en-us+klatt3",
        200,
        30,
        80,
    )
    chosen = make_engine(TtsSettings(voice="en"), voice="en-us+f2")
    assert isinstance(chosen, EspeakEngine)
    assert chosen.voice == "en-us+f2"


def test_a_slow_consumer_does_not_hold_up_other_synthesis() -> None:
    engine = EspeakEngine()
    paused = engine.synthesize(LONG)
    next(paused)  # a reply being played slowly: its consumer waits
    other = list(EspeakEngine("en-us").synthesize(SENTENCE))  # e.g. a WAV for a request
    assert 1.0 < sum(c.seconds for c in other) < 3.0
    assert sum(c.seconds for c in paused) > 60.0  # the paused reply goes on intact
