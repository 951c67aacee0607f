"""What ``echo_mdf``'s filter learns from: the far end's block spectra, kept a little
longer than the filter's tail, and the microphone frames it learnt from while young, so
that it can learn from them again (data reuse).

A new filter learns a room slowly from speech (NLMS over a 400-600 ms tail: 4-7 dB in the
first second). Going over the last second's frames again, a few per new frame, gives it
several steps per frame of the same (echo-only) audio; the frames are replayed only
while the filter is young, so a learnt filter costs no more than before.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Float = npt.NDArray[np.float64]
Complex = npt.NDArray[np.complex128]
#: Remembered frames are handed back this many slots apart: frames replayed in one step
#: are far apart in time, so their spectra differ (coprime with the memory's length).
STRIDE = 37


class FarHistory:
    """The far end's spectra (2 x frame, one per 10 ms frame), newest first: the
    ``partitions`` the filter needs, plus ``kept`` older frames to replay.

    Stored in a buffer twice as long as what is visible, so a window is a view and the
    buffer is shifted once every ``partitions + kept`` frames, not every frame."""

    def __init__(self, partitions: int, bins: int, kept: int) -> None:
        self.partitions = partitions
        self.bins = bins
        self.kept = kept
        self.reset()

    def reset(self) -> None:
        rows = self.partitions + self.kept
        self._spectra: Complex = np.zeros((2 * rows, self.bins), np.complex128)
        self._power: Float = np.zeros((2 * rows, self.bins))
        self._newest = rows
        #: Frames pushed since the reset.
        self.frames = 0

    def push(self, spectrum: Complex) -> None:
        rows = self.partitions + self.kept
        if self._newest == 0:
            self._spectra[rows:] = self._spectra[:rows]
            self._power[rows:] = self._power[:rows]
            self._newest = rows
        self._newest -= 1
        self._spectra[self._newest] = spectrum
        self._power[self._newest] = spectrum.real**2 + spectrum.imag**2
        self.frames += 1

    def spectra(self, age: int = 0) -> Complex:
        """The ``partitions`` spectra the filter saw ``age`` frames ago, newest first."""
        start = self._newest + age
        return self._spectra[start : start + self.partitions]

    def stack(self, ages: list[int]) -> tuple[Complex, Float]:
        """``spectra`` and ``power`` of each of ``ages``, stacked (ages x partitions x bins)."""
        rows = np.array(ages)[:, None] + self._newest + np.arange(self.partitions)
        return self._spectra[rows], self._power[rows]

    def power(self, age: int = 0) -> Float:
        """Their power per bin (``|spectra(age)|^2``)."""
        start = self._newest + age
        return self._power[start : start + self.partitions]


class ReplayMemory:
    """The microphone frames the filter learnt from (echo-only frames), by frame number,
    for the last ``kept`` frames of the far end; handed back in turn, ``STRIDE`` apart."""

    def __init__(self, kept: int, frame_samples: int) -> None:
        self.kept = kept
        self.frame_samples = frame_samples
        self.reset()

    def reset(self) -> None:
        self._near: Float = np.zeros((self.kept, self.frame_samples))
        self._numbers = np.full(self.kept, -(10**9), np.int64)
        self._cursor = 0

    def remember(self, number: int, near: Float) -> None:
        """Frame ``number`` (``FarHistory.frames`` when it came) and its microphone."""
        slot = number % self.kept
        self._near[slot] = near
        self._numbers[slot] = number

    def take(self, now: int, count: int) -> list[tuple[int, Float]]:
        """Up to ``count`` remembered frames in turn (``next``), none of them twice."""
        found: list[tuple[int, Float]] = []
        for _ in range(count):
            one = self.next(now)
            if one is None or any(one[0] == age for age, _ in found):
                break
            found.append(one)
        return found

    def next(self, now: int) -> tuple[int, Float] | None:
        """The next remembered frame still within reach at frame ``now``: its age
        (frames) and its microphone; None when none is."""
        for _ in range(self.kept):
            slot = self._cursor
            self._cursor = (self._cursor + STRIDE) % self.kept
            age = now - int(self._numbers[slot])
            if 0 < age < self.kept:
                return age, self._near[slot]
        return None
