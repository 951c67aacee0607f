"""Make the feedback sounds in satellite/data: awake, done, error (16 kHz mono 16-bit).

Soft sine tones with raised-cosine edges, deterministic, a few kilobytes each. Run with
the project's venv: ``python scripts/make_sounds.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from satellite.audio.chunk import PIPELINE_RATE_HZ, AudioChunk, float_to_int16
from satellite.audio.wav import write_wav

DATA = Path(__file__).resolve().parent.parent / "satellite" / "data"
RATE = PIPELINE_RATE_HZ
LEVEL = 0.3
EDGE_SECONDS = 0.01

Float = npt.NDArray[np.float32]


def tone(frequency_hz: float, seconds: float) -> Float:
    """A sine with a soft start and end, and its second harmonic for warmth."""
    t = np.arange(int(seconds * RATE)) / RATE
    wave = np.sin(2 * np.pi * frequency_hz * t) + 0.25 * np.sin(4 * np.pi * frequency_hz * t)
    edge = int(EDGE_SECONDS * RATE)
    ramp = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, edge))
    envelope = np.ones(len(t))
    envelope[:edge] = ramp
    envelope[-edge:] = ramp[::-1]
    decay = np.exp(-t * 6.0)
    return (wave * envelope * decay / 1.25 * LEVEL).astype(np.float32)


def gap(seconds: float) -> Float:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


SOUNDS: dict[str, Float] = {
    # rising: "I am listening"
    "awake": np.concatenate([tone(660.0, 0.09), tone(880.0, 0.14)]),
    # falling, higher: "got it" (played while the person may still go on, so it must not
    # sound like speech to the VAD: a falling 880 -> 660 Hz pair did, at p 0.51)
    "done": np.concatenate([tone(1175.0, 0.09), tone(880.0, 0.14)]),
    # two low pulses: "that did not work"
    "error": np.concatenate([tone(330.0, 0.12), gap(0.06), tone(311.0, 0.18)]),
}


def main() -> None:
    for name, audio in SOUNDS.items():
        path = DATA / f"{name}.wav"
        write_wav(path, AudioChunk.from_int16(float_to_int16(audio)))
        print(f"wrote {path} ({len(audio) / RATE:.2f} s)")


if __name__ == "__main__":
    main()
