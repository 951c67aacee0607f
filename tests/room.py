"""A room without a sound card: what the satellite's microphone hears of its own speaker.

The speaker's output reaches the microphone after the output latency (``delay_ms``),
through a room (an impulse response: the direct path, then an exponentially decaying
reverberant tail with the given RT60) and louder than a person (a small speaker next
to the microphone: ``echo_gain_db`` relative to the person's speech). Deterministic by
``seed``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.signal import fftconvolve

from satellite.frontend.echo import echo_return_loss_enhancement

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


def to_int16(x: Float) -> npt.NDArray[np.int16]:
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


@dataclass
class OverReply:
    """One reply played into a room with a person talking over it, as the microphone
    hears it: with the echo, without it, and through an echo canceller."""

    mic: Float  # echo + person + noise
    alone: Float  # person + noise (no reply playing)
    cancelled: Float  # ``mic`` through the canceller, re-aligned with it
    start: int  # where the person's speech begins, samples
    end: int

    def echo_taken_out_db(self, span: slice) -> float:
        """The echo taken out over ``span``, dB (the person and the noise set aside)."""
        return echo_return_loss_enhancement(
            (self.mic - self.alone)[span], (self.cancelled - self.alone)[span]
        )


class Speaking:
    """A satellite replying, reply after reply, in one room; one echo canceller (given
    10 ms frames of the microphone and of the reference, it returns the microphone with
    the echo taken out, ``late`` samples late) keeps what it learnt between replies,
    as ``EchoStage`` does. The reference comes 2.5 ms before the echo's direct path (the
    latency is only known roughly); noise ``noise_below_db`` under the reply's level."""

    def __init__(
        self,
        room: Room,
        cancel: Callable[[npt.NDArray[np.int16], npt.NDArray[np.int16]], npt.NDArray[np.int16]],
        late: int = 160,
        noise_below_db: float = 30.0,
        seed: int = 0,
    ) -> None:
        self.room = room
        self.cancel = cancel
        self.late = late
        self.noise_below_db = noise_below_db
        self.rng = np.random.default_rng(seed)

    def reply(self, played: Float, person: Float | None = None, at: int = 0) -> OverReply:
        """``played`` (then 0.5 s of its tail) with ``person`` (already at its level)
        from sample ``at``."""
        played = np.concatenate([played, np.zeros(RATE // 2)])
        echo = self.room.echo(played)
        noise_db = level_db(played[: -RATE // 2]) - self.noise_below_db
        noise = self.rng.standard_normal(len(played)) * 10 ** (noise_db / 20)
        near = np.zeros(len(played))
        end = at
        if person is not None:
            end = min(len(played), at + len(person))
            near[at:end] = person[: end - at]
        mic = echo + near + noise
        shift = int(self.room.delay_ms * RATE / 1000) - 40
        far = to_int16(np.concatenate([np.zeros(shift), played])[: len(played)])
        mic16 = to_int16(mic)
        out = np.zeros(len(played) + self.late)
        for start in range(0, len(played) - 159, 160):
            piece = slice(start, start + 160)
            out[start : start + 160] = self.cancel(mic16[piece], far[piece])
        return OverReply(mic, near + noise, out[self.late : self.late + len(mic)], at, end)
