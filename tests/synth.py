"""Test audio made at test time: eSpeak NG and flite voices, silence, noise at an SNR."""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from satellite.audio.chunk import PIPELINE_RATE_HZ, AudioChunk, resample

Float = npt.NDArray[np.float32]
RATE = PIPELINE_RATE_HZ
#: Samples quieter than this (on a 16-bit scale) are trimmed from a clip's ends.
TRIM_LEVEL = 200.0


def have_espeak() -> bool:
    """True when Debian's espeak-ng program is installed."""
    return shutil.which("espeak-ng") is not None


def espeak(text: str, voice: str = "en-us", rate_wpm: int = 160, pitch: int = 50) -> Float:
    """Speak ``text`` with eSpeak NG; float samples on a 16-bit scale at 16 kHz, trimmed."""
    out = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(rate_wpm), "-p", str(pitch), "--stdout", text],
        capture_output=True,
        check=True,
    ).stdout
    return trim(_wav_to_float(out))


def flite(text: str, voice: str = "kal16") -> Float:
    """Speak ``text`` with flite (a second, different synthesiser); trimmed, 16 kHz."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.wav"
        subprocess.run(
            ["flite", "-voice", voice, "-t", text, "-o", str(path)], check=True, capture_output=True
        )
        return trim(_wav_to_float(path.read_bytes()))


def _wav_to_float(data: bytes) -> Float:
    with wave.open(io.BytesIO(data)) as wav:
        rate = wav.getframerate()
        raw = wav.readframes(wav.getnframes())
    audio = np.frombuffer(raw, dtype="<i2").astype(np.float32)
    return resample(audio, rate, RATE) if rate != RATE else audio


def trim(audio: Float, level: float = TRIM_LEVEL) -> Float:
    """Cut leading and trailing samples quieter than ``level``."""
    loud = np.nonzero(np.abs(audio) > level)[0]
    if not len(loud):
        return audio[:0]
    return audio[loud[0] : loud[-1] + 1]


def silence(seconds: float) -> Float:
    """Digital silence."""
    return np.zeros(round(seconds * RATE), dtype=np.float32)


def white_noise(seconds: float, rms: float, seed: int = 0) -> Float:
    """Gaussian white noise with the given RMS (16-bit scale)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(round(seconds * RATE)) * rms).astype(np.float32)


def rms(audio: Float) -> float:
    """Root mean square."""
    return float(np.sqrt(np.mean(np.square(audio.astype(np.float64))))) if len(audio) else 0.0


def active_rms(audio: Float) -> float:
    """RMS over the louder half of 20 ms frames (the speech, not the pauses)."""
    frames = len(audio) // 320
    if not frames:
        return rms(audio)
    energy = np.square(audio[: frames * 320].astype(np.float64)).reshape(frames, 320).mean(1)
    loud = np.sort(energy)[frames // 2 :]
    return float(np.sqrt(loud.mean()))


def add_noise(speech: Float, snr_db: float, seed: int = 0, reference: Float | None = None) -> Float:
    """Mix white noise into ``speech`` so that (active speech RMS / noise RMS) = ``snr_db``."""
    level = active_rms(reference if reference is not None else speech)
    noise_rms = level / (10.0 ** (snr_db / 20.0))
    return speech + white_noise(len(speech) / RATE, noise_rms, seed)


def to_chunk(audio: Float) -> AudioChunk:
    """Clip to 16 bits and wrap as a pipeline chunk."""
    return AudioChunk.from_int16(np.clip(np.round(audio), -32768, 32767).astype(np.int16))


@dataclass(frozen=True)
class Scene:
    """A wake word, a gap, a command, with the command's true start and end in seconds."""

    audio: Float
    command_start_seconds: float
    command_end_seconds: float


def wake_scene(
    command: str,
    voice: str = "en-us",
    rate_wpm: int = 150,
    lead_seconds: float = 1.0,
    gap_seconds: float = 0.45,
    tail_seconds: float = 1.5,
) -> Scene:
    """'okay nabu' + gap + command, between silences (add noise separately)."""
    wake = espeak("okay nabu", voice, rate_wpm)
    cmd = espeak(command, voice, rate_wpm)
    start = lead_seconds + len(wake) / RATE + gap_seconds
    audio = np.concatenate(
        [silence(lead_seconds), wake, silence(gap_seconds), cmd, silence(tail_seconds)]
    )
    return Scene(audio, start, start + len(cmd) / RATE)
