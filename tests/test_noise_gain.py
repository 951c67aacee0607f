"""Noise suppression keeps the speech (and removes noise); gain reaches its target."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.audio.framer import Framer
from satellite.frontend.base import FrameFilter
from satellite.frontend.gain import AutoGain
from satellite.frontend.noise import make_noise_suppressor
from tests import synth

pytestmark = pytest.mark.usefixtures("need_espeak")


def _filter(stage: FrameFilter, audio: synth.Float) -> synth.Float:
    out = [stage.process(frame).to_int16() for frame in Framer().push(synth.to_chunk(audio))]
    return np.concatenate(out).astype(np.float32)


def _envelope(audio: synth.Float) -> synth.Float:
    frames = len(audio) // 320
    energy: synth.Float = np.square(audio[: frames * 320]).reshape(frames, 320).mean(1)
    return np.sqrt(energy)


@pytest.mark.parametrize(("engine", "level"), [("speex", 30), ("webrtc", 2), ("webrtc", 4)])
def test_suppression_keeps_speech_and_removes_noise(engine: str, level: int) -> None:
    speech = np.concatenate(
        [
            synth.silence(1.0),
            synth.espeak("please turn on the kitchen light", "en-us", 160),
            synth.silence(0.5),
        ]
    )
    noisy = synth.add_noise(speech, 5.0, seed=1, reference=speech)
    stage = make_noise_suppressor(engine, level, level)
    out = _filter(stage, noisy)
    n = min(len(out), len(speech))
    out, clean, noisy = out[:n], speech[:n], noisy[:n]
    noise_only = slice(int(0.5 * synth.RATE), int(0.95 * synth.RATE))
    # Noise alone is attenuated by at least 10 dB ...
    assert synth.rms(out[noise_only]) < synth.rms(noisy[noise_only]) / 10 ** (10 / 20)
    # ... while the speech keeps its level (not the near-silence of speex's AGC trap)
    loud = _envelope(clean) > 0.3 * _envelope(clean).max()
    assert synth.active_rms(out) > 0.3 * synth.active_rms(clean)
    assert _envelope(out)[loud].mean() > 0.5 * _envelope(clean)[loud].mean()
    # ... and its shape: the output's envelope follows the clean speech.
    assert np.corrcoef(_envelope(out), _envelope(clean))[0, 1] > 0.85
    # Output SNR is better than the input's 5 dB.
    noise_out = synth.rms(out[noise_only])
    assert 20 * np.log10(synth.active_rms(out) / max(noise_out, 1e-3)) > 15


def test_off_is_identity() -> None:
    audio = synth.add_noise(synth.espeak("hello there", "en-us"), 10.0)
    out = _filter(make_noise_suppressor("off", 0, 0), audio)
    np.testing.assert_array_equal(out, np.clip(np.round(audio[: len(out)]), -32768, 32767))


def test_frame_size_is_checked() -> None:
    stage = make_noise_suppressor("speex", 30, 0)
    with pytest.raises(Exception, match="10 ms frames"):
        stage.process(AudioChunk.from_int16(np.zeros(100, dtype=np.int16)))


@pytest.mark.parametrize("scale_db", [-30.0, -15.0, 0.0])
def test_gain_brings_speech_towards_target(scale_db: float) -> None:
    speech = synth.espeak("the quick brown fox jumps over the lazy dog, twice over", "en-us")
    speech = speech / np.abs(speech).max() * 16000 * 10 ** (scale_db / 20)
    audio = np.concatenate([synth.silence(0.5), speech, speech])
    agc = AutoGain(target_dbfs=-20.0, max_gain_db=30.0)
    out = _filter(agc, audio)
    second = out[len(out) - len(speech) :]  # after the gain has settled
    level_db = 20 * np.log10(synth.active_rms(second) / 32768)
    assert -26.0 <= level_db <= -14.0
    assert np.abs(out).max() <= 32000


def test_gain_does_not_pump_noise_up() -> None:
    noise = synth.white_noise(5.0, 30.0)  # about -61 dBFS
    agc = AutoGain(target_dbfs=-20.0, max_gain_db=24.0)
    out = _filter(agc, noise)
    assert agc.gain_db < 1.0
    assert synth.rms(out) < 2 * synth.rms(noise)
