"""A room without a sound card: what the satellite's microphone hears of its own speaker.

The speaker's output reaches the microphone after the output latency (``delay_ms``),
through a room (an impulse response: the direct path, then an exponentially decaying
reverberant tail with the given RT60) and louder than a person (a small speaker next
to the microphone: ``echo_gain_db`` relative to the person's speech). Deterministic by
``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.signal import fftconvolve

Float = npt.NDArray[np.float64]
RATE = 16000


def impulse_response(rt60_seconds: float, seed: int = 0, rate: int = RATE) -> Float:
    """Direct path at 0, early reflections, then noise decaying by 60 dB in RT60."""
    rng = np.random.default_rng(seed)
    length = int(rt60_seconds * rate)
    t = np.arange(length) / rate
    decay = 10 ** (-3 * t / rt60_seconds)  # -60 dB at rt60
    tail = rng.standard_normal(length) * decay * 0.2
    tail[: int(0.002 * rate)] = 0.0  # the first reflection comes 2 ms after the direct path
    tail[0] = 1.0
    for reflection_ms, gain in ((3.1, 0.5), (5.7, -0.35), (9.2, 0.25)):
        tail[int(reflection_ms * rate / 1000)] += gain
    normalised: Float = tail / float(np.sqrt(np.sum(tail**2)))
    return normalised


@dataclass(frozen=True)
class Room:
    delay_ms: float = 60.0
    rt60_seconds: float = 0.3
    seed: int = 0

    def echo(self, played: Float) -> Float:
        """What the microphone hears of ``played`` (same length, in the mic's time)."""
        delay = int(self.delay_ms * RATE / 1000)
        wet = fftconvolve(played, impulse_response(self.rt60_seconds, self.seed))[: len(played)]
        return np.concatenate([np.zeros(delay), wet])[: len(played)]


def level_db(x: Float) -> float:
    return 10 * float(np.log10(np.mean(np.asarray(x, dtype=np.float64) ** 2) + 1e-12))


def scale_to(x: Float, target_db: float) -> Float:
    """``x`` at ``target_db`` mean power (int16 units squared, dB)."""
    return np.asarray(x, np.float64) * 10 ** ((target_db - level_db(x)) / 20)
