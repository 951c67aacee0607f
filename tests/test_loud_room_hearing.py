"""A command in a loud room heard the other way (``stt.other_way``): denoised again from
the raw microphone by WebRTC, a second opinion that hears a 10 dB room, where the raw
microphone (the old other way) hears almost nothing and so refused right commands."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk
from satellite.config import Config, ConfigError, validate
from satellite.stt.hearing import denoised_again
from tests import corpus, robustness, synth
from tests.understand import commands


def _frames(audio: synth.Float) -> list[AudioChunk]:
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    return [
        AudioChunk.from_int16(samples[at : at + FRAME_SAMPLES], timestamp_seconds=at / synth.RATE)
        for at in range(0, len(samples) - FRAME_SAMPLES + 1, FRAME_SAMPLES)
    ]


def _rms(frames: list[AudioChunk]) -> float:
    samples = np.concatenate([np.frombuffer(f.samples, dtype="<i2") for f in frames])
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))


def test_denoised_again_keeps_the_frames_times_and_takes_the_noise_out() -> None:
    noise = synth.white_noise(2.5, 1000.0, seed=3)
    frames = _frames(noise)
    heard = denoised_again(frames, "webrtc2")
    assert [f.timestamp_seconds for f in heard] == [f.timestamp_seconds for f in frames]
    settled = slice(150, None)  # after it has learnt the noise (1.5 s)
    assert _rms(heard[settled]) < 0.5 * _rms(frames[settled])


def test_a_stronger_level_takes_out_more() -> None:
    frames = _frames(synth.white_noise(2.5, 1000.0, seed=4))
    gentle = _rms(denoised_again(frames, "webrtc1")[150:])
    strong = _rms(denoised_again(frames, "webrtc4")[150:])
    assert strong < gentle


def test_other_way_is_checked() -> None:
    assert validate({"stt": {"other_way": "webrtc3"}}).stt.other_way == "webrtc3"
    with pytest.raises(ConfigError, match="other_way"):
        validate({"stt": {"other_way": "speex"}})
    assert Config().stt.other_way in ("raw", "webrtc1", "webrtc2", "webrtc3", "webrtc4")


@pytest.fixture(scope="module")
def rooms_of_noise() -> None:
    missing = [v.label for v in (_KAL16, _KAL_DIPHONE) if not v.available]
    if missing:
        pytest.skip(f"voices {missing} not installed: run scripts/bootstrap.sh")


_KAL16 = next(v for v in corpus.VOICES_ALL if v.label == "flite/kal16@1")
_KAL_DIPHONE = next(v for v in corpus.VOICES_ALL if v.label == "festival/kal_diphone@1")


def _judged(config: Config, voice: corpus.Voice, text: str, room: corpus.Room, seed: int) -> str:
    """A command said with listening on (no wake word), asked again when doubtful."""
    row = next(r for r in commands() if r[0] == text)
    what, _ = robustness.judge(
        config, robustness.listener(config), voice, text, room, row[1], row[2], seed, wake=False
    )
    return what


@pytest.mark.usefixtures("rooms_of_noise")
def test_a_right_device_action_in_pink_noise_is_no_longer_refused() -> None:
    """flite's kal16 "turn on the reading lamp" in pink noise 10 dB below it: heard right
    (denoised) both times, refused while the other way was the raw microphone (which
    heard no sentence of the grammar), understood after asking with WebRTC's."""
    room = corpus.Room("pink", 10.0)
    said = "turn on the reading lamp"
    old = validate({"stt": {"other_way": "raw"}})
    assert _judged(old, _KAL16, said, room, 1) == robustness.NOT_UNDERSTOOD
    assert _judged(Config(), _KAL16, said, room, 1) == robustness.RIGHT_AFTER_ASKING


@pytest.mark.usefixtures("rooms_of_noise")
def test_a_misheard_device_action_in_white_noise_stays_refused() -> None:
    """Festival's kal_diphone "turn on the lights in the kitchen" in white noise 10 dB
    below it is heard as another sentence of the grammar: not understood, never acted on."""
    room = corpus.Room("white", 10.0)
    said = "turn on the lights in the kitchen"
    assert _judged(Config(), _KAL_DIPHONE, said, room, 3) == robustness.NOT_UNDERSTOOD
