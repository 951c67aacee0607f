"""Where the echo is against the reference: two crystals, and each reply's start.

**Two crystals.** A microphone and a speaker on two sound cards (a USB microphone and
the board's jack) run on two crystals, typically 10-50 ppm apart. The card plays the
reference without a gap, so within a reply the echo slides against it: 50 ppm is 5
samples over a 7 s reply, and the canceller's filter, which cannot follow, takes out
15-17 dB instead of 30 (``bench/echo_alignment.py``). ``EchoTiming`` measures the slide
over each reply and ``Stretcher`` plays the reference to the canceller at the rate the
microphone hears it (windowed-sinc interpolation, its phase carried from piece to
piece). The estimate is closed-loop: what is measured is the slide left after the
stretch, so one card (no slide) keeps the rate at 1.

**Each reply's start.** A reply that starts on a quiet card is placed by the moment its
first write returned, which a scheduler's wake-up or the card's start moves by a
fraction of a millisecond from reply to reply; a sample off is enough for a filter
learnt on the replies before to take out 15-25 dB less, and a few milliseconds make it
learn the room again. So the first 150 ms of each run are matched against where
the echo was at the end of the run before, and the rest of the run is moved by the
difference (``shift``, samples later; the stage takes it).

How a window's echo is found: the phase-transform cross-correlation of microphone and
reference over lags 0-300 ms is the room's fingerprint (its direct path and early
reflections). A window's fingerprint is matched against the fingerprint learnt so far,
whole (which of the room's paths stands highest varies from window to window, so the
highest peak alone is not where the echo is), to a fraction of a sample. A window that
matches too little is not used; five loud ones in a row, and the room has changed (a
speaker moved): its fingerprint is learnt afresh.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .echo_engines import Int16

Float = npt.NDArray[np.float64]

#: The window over which one delay is measured, samples (1 s at 16 kHz).
WINDOW = 16000
#: The window at a run's start over which it is matched to the run before, samples.
ALIGN_WINDOW = 2400
#: A run more than this off the run before is moved, samples.
ALIGN_TOLERANCE = 0.2
#: The most a window is searched away from the fingerprint, samples (20 ms).
MAX_OFFSET = 320
#: Lags of the fingerprint, samples (0-300 ms), read at 1/UPSAMPLE of a sample.
MAX_LAG = 4800
UPSAMPLE = 2
#: A window counts when its fingerprint matches the learnt one at least this well
#: (cosine of the two, each less its mean).
MIN_MATCH = 0.3
#: A window counts when the reference over it is at least this loud (mean power).
MIN_REFERENCE_POWER = 1e4
#: How much each matched window adds to the learnt fingerprint.
LEARN = 0.2
#: Loud windows in a row that match no more: the room changed (a speaker moved), and
#: its fingerprint is learnt afresh.
MISSES_TO_RELEARN = 5
#: Delays fitted per reply: at least, and the span they must cover, samples.
MIN_WINDOWS = 3
MIN_SPAN = 2 * WINDOW
#: Each reply's measured slide moves the rate this far toward it.
GAIN = 0.7
#: The rate is kept within this of 1 (a sound card further off is broken), ppm.
MAX_PPM = 300.0
#: Half the interpolation kernel, samples.
HALF = 8


class EchoTiming:
    """The microphone's samples per reference sample, less 1 (``rate``), and where each
    run of the reference must go (``shift``). ``observe`` each frame the canceller got
    (microphone, reference, position); ``run_started`` when the reference starts a new
    run."""

    def __init__(self, align: bool = True, follow_rate: bool = True) -> None:
        self.rate = 0.0
        self.align = align
        self.follow_rate = follow_rate
        #: Samples the reference should have been moved later, in all (the frame loop
        #: adds, the player's thread follows).
        self.shift = 0.0
        self.runs_moved = 0
        self.windows_matched = 0
        #: The room's fingerprint (None until a reply was heard).
        self._print: Float | None = None
        #: Where the echo was, against the fingerprint, at the end of the last run.
        self._last_offset: float | None = None
        self._aligning = False
        self._misses = 0
        self._mic: list[Int16] = []
        self._ref: list[Int16] = []
        self._first: int | None = None
        self._next: int | None = None
        #: (window centre, offset) of the current run.
        self._offsets: list[tuple[float, float]] = []

    def observe(self, mic: Int16, reference: Int16, position: int) -> None:
        if self._next is not None and position != self._next:
            self._end_window()  # a gap: frames not cancelled
        if self._first is None:
            self._first = position
        self._mic.append(mic)
        self._ref.append(reference)
        self._next = position + len(mic)
        if self._next - self._first >= (ALIGN_WINDOW if self._aligning else WINDOW):
            self._measure()

    def run_started(self) -> None:
        """The reference jumps: fit the run that ended, start afresh."""
        self._end_window()
        self._fit()
        self._offsets = []
        self._aligning = self.align and self._last_offset is not None

    def _end_window(self) -> None:
        self._mic, self._ref, self._first, self._next = [], [], None, None

    def _measure(self) -> None:
        mic = np.concatenate(self._mic).astype(np.float64)
        ref = np.concatenate(self._ref).astype(np.float64)
        centre = (self._first or 0) + len(mic) / 2
        self._end_window()
        if float(np.mean(ref**2)) < MIN_REFERENCE_POWER:
            return
        curve = fingerprint(mic, ref)
        if self._print is None:
            self._print = curve
            self._offsets.append((centre, 0.0))
            return
        found = offset(curve, self._print)
        if found is None:
            self._misses += 1
            if self._misses >= MISSES_TO_RELEARN:  # another room: learn it afresh
                self._print, self._last_offset, self._aligning = None, None, False
                self._offsets, self._misses = [], 0
            return
        self._misses = 0
        where, _ = found
        self.windows_matched += 1
        if self._aligning and self._last_offset is not None:
            self._aligning = False
            off = where - self._last_offset
            if abs(off) > ALIGN_TOLERANCE:
                self.shift += off
                self.runs_moved += 1
                return  # this run's offsets count from the move on
        self._offsets.append((centre, where))
        back = np.roll(curve, -round(where * UPSAMPLE))
        self._print = (1 - LEARN) * self._print + LEARN * back

    def _fit(self) -> None:
        points = self._offsets
        if points:
            self._last_offset = float(np.median([where for _, where in points[-3:]]))
        if len(points) < MIN_WINDOWS or points[-1][0] - points[0][0] < MIN_SPAN:
            return
        slopes = [
            (b[1] - a[1]) / (b[0] - a[0])
            for i, a in enumerate(points)
            for b in points[i + 1 :]
            if b[0] - a[0] >= WINDOW
        ]
        slope = float(np.median(slopes))  # Theil-Sen: a window spoilt by a person is outvoted
        if self.follow_rate:
            limit = MAX_PPM * 1e-6
            self.rate = float(np.clip(self.rate + GAIN * slope, -limit, limit))


def fingerprint(mic: Float, ref: Float) -> Float:
    """The phase-transform cross-correlation of ``mic`` against ``ref`` at lags
    0 .. MAX_LAG, UPSAMPLE per sample, less its mean, of unit norm."""
    size = 1 << int(np.ceil(np.log2(len(mic) + MAX_LAG)))
    cross = np.fft.rfft(mic, size) * np.conj(np.fft.rfft(ref, size))
    cross /= np.abs(cross) + 1e-9
    curve = np.fft.irfft(cross, size * UPSAMPLE)[: MAX_LAG * UPSAMPLE]
    curve = curve - np.mean(curve)
    norm = float(np.linalg.norm(curve))
    return curve / norm if norm > 0 else curve


def offset(curve: Float, learnt: Float) -> tuple[float, float] | None:
    """How many samples later the echo is in ``curve`` than in ``learnt`` (within
    MAX_OFFSET, to a fraction of a sample) and how well they match; None below
    MIN_MATCH."""
    size = 1 << int(np.ceil(np.log2(2 * len(curve))))
    match = np.fft.irfft(np.fft.rfft(curve, size) * np.conj(np.fft.rfft(learnt, size)), size)
    reach = MAX_OFFSET * UPSAMPLE
    lags = np.concatenate([match[-reach:], match[: reach + 1]])  # -reach .. reach
    peak = int(np.argmax(lags))
    if lags[peak] < MIN_MATCH:
        return None
    shift = 0.0
    if 0 < peak < len(lags) - 1:
        before, at, after = lags[peak - 1], lags[peak], lags[peak + 1]
        bend = before - 2 * at + after
        shift = 0.5 * (before - after) / bend if bend else 0.0
    return float((peak - reach + shift) / UPSAMPLE), float(lags[peak])


class Stretcher:
    """The reference, piece by piece, at ``1 + rate`` of its samples' rate (windowed-sinc
    interpolation; each run starts at its first sample). With ``rate`` 0 it gives the
    samples back exactly, ``HALF`` samples later: the last ones of a piece come with the
    next."""

    def __init__(self) -> None:
        self._buffer: Float = np.zeros(HALF)
        self._phase = float(HALF)  # where the next output sits in the buffer

    def later(self, fraction: float) -> None:
        """Move what comes next ``fraction`` (0-1) of a sample later."""
        self._phase -= fraction

    def start(self, rate: float) -> Int16:
        """A new run: what was held of the last one (its end, silence after it)."""
        step = 1.0 / (1.0 + rate)
        held = max(0, int(np.ceil((len(self._buffer) - self._phase) / step)))
        out = self.stretch(np.zeros(2 * HALF, np.int16), rate, limit=held)
        self._buffer = np.zeros(HALF)
        self._phase = float(HALF)
        return out

    def stretch(self, samples: Int16, rate: float, limit: int | None = None) -> Int16:
        """``samples`` at ``1 + rate`` times their rate: as many as can be made yet."""
        buffer = np.concatenate([self._buffer, samples.astype(np.float64)])
        step = 1.0 / (1.0 + rate)
        count = max(0, int(np.floor((len(buffer) - 1 - HALF - self._phase) / step)) + 1)
        if limit is not None:
            count = min(count, limit)
        where = self._phase + step * np.arange(count)
        base = np.floor(where).astype(np.int64)
        taps = np.arange(-HALF + 1, HALF + 1)
        offsets = taps[None, :] - (where - base)[:, None]
        weights = np.sinc(offsets) * (0.5 + 0.5 * np.cos(np.pi * offsets / HALF))
        out: Float = np.sum(buffer[base[:, None] + taps[None, :]] * weights, axis=1)
        self._phase += step * count
        keep = max(0, int(np.floor(self._phase)) - HALF)
        self._buffer = buffer[keep:]
        self._phase -= keep
        stretched: Int16 = np.clip(np.round(out), -32768, 32767).astype(np.int16)
        return stretched
