"""Echo cancellation in the frame loop: the satellite's own voice out of its microphone.

The speaker's output is tapped where it goes to the sound card (``audio.echo_tap``):
each piece, converted to 16 kHz, goes into ``EchoReference`` at the microphone sample
where it will be heard: the capture position of that moment (``MicClock``) plus the
output latency (the device queue). ``EchoStage``, the first stage of the front end,
takes the reference for each microphone frame and gives both to the echo canceller
(``echo_engines``). Where nothing was played for a while the stage passes the
microphone through untouched and costs nothing.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import soxr

from ..audio.chunk import PIPELINE_RATE_HZ, AudioChunk, to_float_mono
from ..stt.keywords import power
from .echo_drift import EchoTiming, Stretcher
from .echo_engines import EchoCanceller, Int16
from .echo_mdf import MdfEchoCanceller

#: After the last played sample the canceller runs on this long (the room's tail), s.
TAIL_SECONDS = 0.5
#: The reference is placed this much before the estimated moment it is heard, s.
EARLY_SECONDS = 0.005
#: The microphone clock's offset is the smallest seen over this much of its time, s:
#: long enough to hold frames the loop took at once, short enough that a drifting
#: crystal moves it little (100 ppm over 20 s: 2 ms).
CLOCK_WINDOW_SECONDS = 20.0
#: ... taken in this many blocks.
CLOCK_BLOCKS = 4


class EchoReference:
    """What the speaker played, by sample position on the microphone's clock.

    Thread-safe: the player's thread pushes, the frame loop takes. Silence where nothing
    was played; audio older than ``keep_samples`` behind the newest is dropped.
    """

    def __init__(self, keep_samples: int = PIPELINE_RATE_HZ * 4) -> None:
        self.keep_samples = keep_samples
        self._start = 0  # position of self._audio[0]
        self._audio = np.zeros(0, dtype=np.int16)
        self._lock = threading.Lock()
        #: Position just after the last sample pushed (-1: nothing yet).
        self.last_played = -1

    def push(self, samples: Int16, position: int) -> None:
        """``samples`` (16 kHz mono) will be heard from microphone sample ``position``."""
        with self._lock:
            end = position + len(samples)
            if end <= self._start:
                return
            if position < self._start:
                samples = samples[self._start - position :]
                position = self._start
            have_end = self._start + len(self._audio)
            if end > have_end:
                grow = np.zeros(end - have_end, np.int16)
                self._audio = np.concatenate([self._audio, grow])
            offset = position - self._start
            self._audio[offset : offset + len(samples)] = samples
            self.last_played = max(self.last_played, end)
            excess = len(self._audio) - self.keep_samples
            if excess > 0:
                self._audio = self._audio[excess:]
                self._start += excess

    def take(self, position: int, count: int) -> Int16:
        """The reference for microphone samples ``position .. position + count``."""
        out = np.zeros(count, dtype=np.int16)
        with self._lock:
            lo = max(position, self._start)
            hi = min(position + count, self._start + len(self._audio))
            if hi > lo:
                out[lo - position : hi - position] = self._audio[
                    lo - self._start : hi - self._start
                ]
        return out


class MicClock:
    """Maps the monotonic clock to microphone sample positions.

    The frame loop tells it each frame's end (``heard``). The offset between the
    monotonic clock and the microphone's time is the smallest seen (a loop running
    behind only makes it larger), but only over the last ``window_seconds`` of the
    microphone: a sound card's crystal is not the system's (tens of ppm apart), and a
    capture overrun loses samples, so the true offset moves; the smallest ever seen
    would place the reference later and later behind the echo (100 ppm: 0.36 s a
    hour), where no canceller can use it.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        window_seconds: float = CLOCK_WINDOW_SECONDS,
    ) -> None:
        self.clock = clock
        #: Blocks of the microphone's time, each with the smallest offset seen in it.
        self._block_seconds = window_seconds / CLOCK_BLOCKS
        self._blocks: deque[tuple[int, float]] = deque(maxlen=CLOCK_BLOCKS)
        self._offset: float | None = None

    def heard(self, end_seconds: float) -> None:
        offset = self.clock() - end_seconds
        block = int(end_seconds // self._block_seconds)
        blocks = self._blocks
        while blocks and blocks[-1][0] > block:  # the microphone's time went back
            blocks.pop()
        if blocks and blocks[-1][0] == block:
            if offset >= blocks[-1][1]:
                return
            blocks[-1] = (block, offset)
        else:
            blocks.append((block, offset))
        while blocks[0][0] <= block - CLOCK_BLOCKS:
            blocks.popleft()
        self._offset = min(smallest for _, smallest in blocks)

    def position(self, monotonic_seconds: float) -> int | None:
        """The microphone sample heard at that moment (None before the first frame)."""
        if self._offset is None:
            return None
        return round((monotonic_seconds - self._offset) * PIPELINE_RATE_HZ)


class EchoStage:
    """The front end's first stage: the microphone with the speaker's echo taken out."""

    name = "echo"

    def __init__(
        self,
        canceller: EchoCanceller,
        reference: EchoReference | None = None,
        clock: MicClock | None = None,
        latency_seconds: float = 0.0,
    ) -> None:
        self.canceller = canceller
        self.reference = reference or EchoReference()
        self.clock = clock or MicClock()
        #: From handing audio to a sound card that plays nothing to hearing it, s.
        self.latency_seconds = latency_seconds
        #: Where the audio written next plays if the card has not run dry (None: never
        #: played yet, or flushed). The player's thread writes; a stop flushes from
        #: another, hence the lock.
        self._next_position: int | None = None
        self._placing = threading.Lock()
        #: The speaker's crystal against the microphone's, learnt from replies, and the
        #: reference played to the canceller at the rate the microphone hears it.
        self.timing = EchoTiming()
        self._stretcher = Stretcher()
        self._shifted = 0.0  # of ``timing.shift``, what the reference was moved
        #: Positions where the reference starts a new run (the player's thread adds,
        #: the frame loop takes).
        self._run_starts: deque[int] = deque()
        self.frames_cancelled = 0
        #: Whether the last frame had the speaker's echo taken out (something played).
        self.cancelling = False
        #: Mean power of the reference under the last frame (1.0: nothing played).
        self.reference_power = 1.0
        #: The last frame as the canceller's filter left it, before a residual echo gate
        #: (``frontend.echo.residual_gate``): what the double-talk checks measure. The
        #: frame ``process`` returned when there is no gate.
        self.linear: AudioChunk | None = None

    def process(self, frame: AudioChunk) -> AudioChunk:
        self.clock.heard(frame.end_seconds)
        position = round(frame.timestamp_seconds * PIPELINE_RATE_HZ)
        last = self.reference.last_played
        was_cancelling = self.cancelling
        self.cancelling = not (last < 0 or last < position - TAIL_SECONDS * PIPELINE_RATE_HZ)
        self.reference_power = 1.0
        starts = self._run_starts
        while starts and starts[0] <= position:
            starts.popleft()
            self.timing.run_started()
        if was_cancelling and not self.cancelling:  # the reply ended: fit its slide now,
            self.timing.run_started()  # so the next reply's first writes get the new rate
        if not self.cancelling:
            self.linear = frame
            return frame  # nothing played lately: no echo to take out
        count = frame.num_frames
        mic = np.frombuffer(frame.samples, dtype="<i2")
        reference = self.reference.take(position, count)
        self.reference_power = power(reference)
        out = self.canceller.process(mic, reference)
        self.timing.observe(mic, reference, position)
        self.frames_cancelled += 1
        cancelled = self._chunk(out, frame)
        self.linear = cancelled
        canceller = self.canceller
        if isinstance(canceller, MdfEchoCanceller) and canceller.gate is not None:
            self.linear = self._chunk(canceller.linear, frame)
        return cancelled

    @staticmethod
    def _chunk(samples: Int16, frame: AudioChunk) -> AudioChunk:
        return AudioChunk(
            frame.rate_hz, 2, 1, samples.astype("<i2").tobytes(), frame.timestamp_seconds
        )

    def played(self, chunk: AudioChunk, written_at: float) -> None:
        """The player's thread handed ``chunk`` to the sound card at ``written_at``
        (monotonic).

        A write's return says little of when its audio plays: the device queue takes it
        whenever a period of the card's ring frees (7-20 ms steps), and then the queue
        ahead of it plays first. What does hold is that the card plays what it is given
        without a gap, in order. So a chunk goes right after the one before it, unless
        the card had run dry by the time it was written (a new reply, or synthesis fell
        behind): then it plays as soon as it is written, ``latency_seconds`` later
        (the device's own delay), and starts a new run."""
        samples = self._to_pipeline_rate(chunk)
        # a little early: the filter learns a late start, but cannot use a late reference
        earliest = self.clock.position(written_at + self.latency_seconds - EARLY_SECONDS)
        if earliest is None:
            return  # no microphone yet
        with self._placing:
            self._place(samples, earliest)

    def _place(self, samples: Int16, earliest: int) -> None:
        """``samples`` (16 kHz) after the run before them, or a new run at ``earliest``."""
        rate = self.timing.rate
        following = self._next_position
        shift = self.timing.shift - self._shifted
        self._shifted += shift
        if following is None or earliest >= following:  # a new run
            held = self._stretcher.start(rate)
            if following is not None and len(held):
                self.reference.push(held, following)
            position = earliest
            self._run_starts.append(position)
        else:  # moved where the echo was found, if it was (``EchoTiming``)
            whole = int(np.floor(shift))
            self._stretcher.later(shift - whole)
            position = following + whole
        stretched = self._stretcher.stretch(samples, rate)
        self.reference.push(stretched, position)
        self._next_position = position + len(stretched)

    def flushed(self) -> None:
        """What was queued for the card was dropped: the next write plays when written."""
        with self._placing:
            self._next_position = None

    def _to_pipeline_rate(self, chunk: AudioChunk) -> Int16:
        """16 kHz, chunk by chunk: a streaming resampler would hand its output on late
        (its filter's delay), and a late reference cannot cancel anything."""
        audio: npt.NDArray[np.float32] = to_float_mono(chunk)
        if chunk.rate_hz != PIPELINE_RATE_HZ:
            audio = soxr.resample(audio, chunk.rate_hz, PIPELINE_RATE_HZ)
        return np.clip(np.round(audio * 32768), -32768, 32767).astype(np.int16)

    def reset(self) -> None:
        """Forget the learnt room (after a failure; muting keeps it: same room)."""
        self.canceller.reset()


def echo_return_loss_enhancement(echo: npt.ArrayLike, residual: npt.ArrayLike) -> float:
    """ERLE in dB: the echo's power over what is left of it."""
    before = float(np.mean(np.asarray(echo, dtype=np.float64) ** 2))
    after = float(np.mean(np.asarray(residual, dtype=np.float64) ** 2))
    return 10 * float(np.log10(before / max(after, 1e-12)))
