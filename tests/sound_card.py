"""A sound card without one: when the player's writes return, when each sample plays, and
when the microphone hears it, on crystals that are not the system clock's.

The playback path is `run`'s: the player writes ``period_ms`` pieces through the echo tap
into ``AlsaPlaybackSink``, which cuts them into items of one capture period's length
(``FRAME_SAMPLES`` at 16 kHz) and queues ``device_queue_ms // 10`` of them for its
output thread; that thread writes each into an ALSA ring of ``ALSA_PERIODS`` periods of
``FRAME_SAMPLES`` frames, blocking until it fits. Here the two threads' blocking is
worked out by a recurrence instead of run (deterministic by ``seed``, with the
scheduler's wake-up delays drawn from an exponential), the device plays at its own
crystal's rate from the moment the ring gets its first item, and the microphone
captures at its own rate. ``acoustic_echo`` is what the microphone then hears of the
output (before the room's reverberation, ``tests/room.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import soxr

from satellite.audio.alsa import ALSA_PERIODS
from satellite.audio.chunk import FRAME_SAMPLES, PIPELINE_RATE_HZ, AudioChunk
from satellite.audio.echo_tap import EchoTap
from satellite.audio.io import NullSink
from satellite.frontend.echo import EchoStage, MicClock
from satellite.frontend.echo_engines import EchoCanceller
from tests.room import Float, Room, to_int16

#: The player's writes and the silence before a reply after a quiet spell, ms (defaults).
PERIOD_MS = 20
LEAD_IN_MS = 30
#: Mean delay from a capture period's end to the frame loop taking it, ms.
LOOP_MS = 1.0
#: The hours before a reply are told to the microphone clock every this many frames.
UPTIME_STRIDE = 10


@dataclass(frozen=True)
class Crystals:
    """How far the sound card's clocks are from the system clock, and its scheduler."""

    speaker_ppm: float = 0.0  # + : the speaker plays faster than nominal
    mic_ppm: float = 0.0  # + : the microphone captures faster than nominal
    wake_ms: float = 0.3  # mean delay before a thread blocked on the card or queue runs
    start_ms: float = 0.0  # the card starts playing up to this long after its first write
    seed: int = 0

    def speaker_rate(self, nominal_hz: int) -> float:
        return nominal_hz * (1 + self.speaker_ppm * 1e-6)

    @property
    def mic_rate(self) -> float:
        return PIPELINE_RATE_HZ * (1 + self.mic_ppm * 1e-6)

    def mic_time(self, sample: int) -> float:
        """System time (s, microphone started at 0) when microphone ``sample`` was heard."""
        return sample / self.mic_rate


@dataclass(frozen=True)
class Playback:
    """One stream written without a gap: when each write returned, when the device began."""

    returned: list[float]  # system s, one per write
    device_start: float  # system s the ring's first sample began to play


def play(
    writes: list[int],
    rate_hz: int,
    start: float,
    crystals: Crystals,
    queue_items: int = 4,
    rng: np.random.Generator | None = None,
) -> Playback:
    """Writes of ``writes`` samples each at ``rate_hz``, the first at system time ``start``
    (the player holds the whole reply, so it writes as fast as the queue takes)."""
    rng = rng or np.random.default_rng(crystals.seed)
    item = FRAME_SAMPLES * rate_hz // PIPELINE_RATE_HZ
    ring = ALSA_PERIODS * FRAME_SAMPLES
    rate = crystals.speaker_rate(rate_hz)
    put: list[float] = []  # when the player's put of each item returned
    taken: list[float] = []  # when the output thread took it from the queue
    done: list[float] = []  # when its ALSA write returned
    returned: list[float] = []
    written = 0
    device_start = math.inf
    ready = start
    for length in writes:
        for offset in range(0, length, item):
            i = len(put)
            at = ready if not put else max(ready, put[-1])
            if i >= queue_items and taken[i - queue_items] > at:  # the queue is full
                at = taken[i - queue_items] + rng.exponential(crystals.wake_ms / 1000)
            put.append(at)
            got = max(at, done[-1] if done else at)
            taken.append(got)
            written += min(item, length - offset)
            if not done:
                device_start = got + rng.uniform(0, crystals.start_ms / 1000)
            need = written - ring  # the device must have played this much first
            fits = got
            if need > 0:
                played_at = device_start + math.ceil(need / FRAME_SAMPLES) * FRAME_SAMPLES / rate
                if played_at > got:
                    fits = played_at + rng.exponential(crystals.wake_ms / 1000)
            done.append(fits)
        ready = put[-1]
        returned.append(ready)
    return Playback(returned, device_start)


def acoustic_echo(
    output: Float, rate_hz: int, device_start: float, crystals: Crystals, first: int, count: int
) -> Float:
    """``output`` played from ``device_start`` at the speaker's rate, as the microphone's
    samples ``first .. first + count`` hear it (the direct path only)."""
    at_mic = soxr.resample(output, crystals.speaker_rate(rate_hz), crystals.mic_rate)
    begins = round(device_start * crystals.mic_rate) - first
    heard = np.zeros(count)
    lo, hi = max(0, begins), min(count, begins + len(at_mic))
    if hi > lo:
        heard[lo:hi] = at_mic[lo - begins : hi - begins]
    return heard


class SystemClock:
    """The monotonic clock the satellite reads, set by the simulation."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ThroughTheCard:
    """One satellite's echo stage behind one simulated card: replies played in turn
    through the real echo tap, the microphone's frames and the writes' returns reaching
    the stage in system-time order (the frames between replies tell the clock only)."""

    def __init__(
        self,
        canceller: EchoCanceller,
        rate_hz: int,
        crystals: Crystals,
        room: Room,
        latency_seconds: float = 0.0,
    ) -> None:
        self.rate_hz = rate_hz
        self.crystals = crystals
        self.room = room
        self.clock = SystemClock()
        self.stage = EchoStage(
            canceller,
            clock=MicClock(self.clock),
            latency_seconds=latency_seconds,
        )
        self.tap = EchoTap(NullSink(), self.stage.played, self.clock, self.stage.flushed)
        self._rng = np.random.default_rng(crystals.seed + 1)
        self.heard_to = 0  # microphone samples the loop has had

    def _loop_delay(self) -> float:
        return float(self._rng.exponential(LOOP_MS / 1000))

    def reply(self, reply: Float, at_seconds: float) -> tuple[Float, Float]:
        """A reply (int16 units at the card's rate) played ``at_seconds`` after the
        microphone started. Returns the echo the microphone heard and what the stage
        left of it, from the reply's start to 0.3 s after it."""
        rate_hz, crystals = self.rate_hz, self.crystals
        period = rate_hz * PERIOD_MS // 1000
        output = np.concatenate([np.zeros(rate_hz * LEAD_IN_MS // 1000), reply])
        writes = [rate_hz * LEAD_IN_MS // 1000] + [period] * math.ceil(len(reply) / period)
        playback = play(writes, rate_hz, at_seconds, crystals, rng=self._rng)
        first = int(at_seconds * PIPELINE_RATE_HZ) // FRAME_SAMPLES * FRAME_SAMPLES
        seconds = playback.device_start - at_seconds + len(output) / rate_hz + 0.3
        count = round(seconds * PIPELINE_RATE_HZ) // FRAME_SAMPLES * FRAME_SAMPLES
        heard = acoustic_echo(output, rate_hz, playback.device_start, crystals, first, count)
        echo = self.room.echo(heard)
        mic = to_int16(echo)
        for end in range(self.heard_to + FRAME_SAMPLES, first + 1, FRAME_SAMPLES * UPTIME_STRIDE):
            self.clock.now = crystals.mic_time(end) + self._loop_delay()
            self.stage.clock.heard(end / PIPELINE_RATE_HZ)  # between replies: the clock only
        self.heard_to = first + count
        events = [(t, 1, w) for w, t in enumerate(playback.returned)]
        for f in range(count // FRAME_SAMPLES):
            end = first + (f + 1) * FRAME_SAMPLES
            events.append((crystals.mic_time(end) + self._loop_delay(), 0, f))
        out = np.zeros(count)
        starts = np.cumsum([0, *writes])
        for when, kind, index in sorted(events):
            self.clock.now = when
            if kind == 0:
                span = slice(index * FRAME_SAMPLES, (index + 1) * FRAME_SAMPLES)
                at = (first + span.start) / PIPELINE_RATE_HZ
                frame = AudioChunk(PIPELINE_RATE_HZ, 2, 1, mic[span].tobytes(), at)
                out[span] = np.frombuffer(self.stage.process(frame).samples, "<i2")
            else:
                piece = to_int16(output[starts[index] : starts[index + 1]])
                self.tap.write(AudioChunk(rate_hz, 2, 1, piece.tobytes(), 0.0))
        return echo, out
