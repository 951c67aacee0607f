"""The few scipy.signal functions the acoustic estimator needs, in numpy alone.

``import scipy.signal`` cost the satellite ~64-78 MB of RSS and ~1 s of start-up (issue 16,
bench/results/memory.json) for five functions; these stand-ins give the same results:

* :func:`sos_impulse_response` + :class:`FirFilters`: ``scipy.signal.sosfilt`` of a fixed
  filter, as an FFT convolution with its impulse response cut where the tail's energy is
  negligible (the caller picks the length; the tests bound the tail).
* :func:`gaussian`: ``scipy.signal.windows.gaussian`` (symmetric), the same arithmetic.
* :func:`fftconvolve_same`: ``scipy.signal.fftconvolve(a, b, mode="same")``.
* :func:`find_peaks`: the indices of ``scipy.signal.find_peaks(x, height=h,
  prominence=p)``, the same local maxima (plateaus included) and prominences.

tests/test_prosody_dsp.py compares each with scipy's (a dev dependency only).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Float = npt.NDArray[np.float64]
Indices = npt.NDArray[np.intp]
#: One second-order section: b0, b1, b2, a0 (= 1), a1, a2, as scipy's ``sos`` rows.
Section = tuple[float, float, float, float, float, float]


def fast_size(n: int) -> int:
    """The smallest 2**i * 3**j * 5**k >= n: an FFT length numpy transforms quickly."""
    if n <= 1:
        return 1
    best = 1 << (n - 1).bit_length()
    fives = 1
    while fives < best:  # 5**k
        odd = fives
        while odd < best:  # 3**j * 5**k, times the smallest power of 2 that reaches n
            best = min(best, odd << (-(-n // odd) - 1).bit_length())
            odd *= 3
        fives *= 5
    return best


# --- filtering ----------------------------------------------------------------------------


def sos_impulse_response(sos: Sequence[Section], length: int) -> Float:
    """The first ``length`` samples of a cascade of biquads' impulse response.

    Each section runs the recursion ``scipy.signal.sosfilt`` runs (transposed direct form
    II) on a unit impulse, sample by sample: a few ms for a few thousand samples, once.
    """
    samples = [1.0] + [0.0] * (length - 1)
    for b0, b1, b2, a0, a1, a2 in sos:
        if a0 != 1.0:
            raise ValueError(f"a section's a0 must be 1, got {a0}")
        state1 = state2 = 0.0
        out = []
        for x in samples:
            y = b0 * x + state1
            state1 = b1 * x - a1 * y + state2
            state2 = b2 * x - a2 * y
            out.append(y)
        samples = out
    return np.array(samples, dtype=np.float64)


class FirFilters:
    """Fixed causal FIR filters applied together by overlap-save FFT convolution.

    The input is cut into blocks of ``size - taps + 1`` new samples, each transformed with
    the ``taps - 1`` samples before it (zeros before the start); the filters' spectra are
    computed once. One block at a time keeps every array at 64 kB: in the CPU's cache, and
    reused by malloc rather than mapped afresh (one FFT of a whole utterance, or of all its
    blocks at once, page-faults through megabytes and ran 1.5-2.5x slower).
    """

    def __init__(self, responses: Sequence[Float], size: int = 8192) -> None:
        self.taps = max(len(h) for h in responses)
        if size < 2 * self.taps:
            raise ValueError(f"FFT size {size} is too small for {self.taps} taps")
        self.size = size
        self.step = size - self.taps + 1
        self._spectra = [np.fft.rfft(h, size) for h in responses]

    def __call__(self, x: Float) -> Float:
        """``x`` through every filter: one row per filter, as long as ``x``."""
        blocks = -(-len(x) // self.step)
        padded = np.zeros(self.taps - 1 + blocks * self.step)
        padded[self.taps - 1 : self.taps - 1 + len(x)] = x
        out = np.empty((len(self._spectra), blocks * self.step))
        for start in range(0, blocks * self.step, self.step):
            spectrum = np.fft.rfft(padded[start : start + self.size])
            for row, response in zip(out, self._spectra, strict=True):
                block = np.fft.irfft(spectrum * response, self.size)
                row[start : start + self.step] = block[self.taps - 1 :]
        result: Float = out[:, : len(x)]
        return result


# --- smoothing ----------------------------------------------------------------------------


def gaussian(length: int, std: float) -> Float:
    """A symmetric Gaussian window of ``length`` points (peak 1 when the length is odd)."""
    n = np.arange(length) - (length - 1.0) / 2.0
    out: Float = np.exp(-(n**2) / (2 * std * std))
    return out


def fftconvolve_same(a: Float, b: Float) -> Float:
    """The full convolution of ``a`` and ``b`` by FFT, its centre as long as ``a``."""
    if not len(a) or not len(b):
        return np.zeros(len(a))
    full = len(a) + len(b) - 1
    size = fast_size(full)
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)
    start = (full - len(a)) // 2
    centre: Float = out[start : start + len(a)]
    return centre


# --- peaks --------------------------------------------------------------------------------


def local_maxima(x: Float) -> Indices:
    """Samples higher than both neighbours; a flat top counts once, at its middle.

    As scipy: a flat top's middle is ``(first + last) // 2``, and the first and last
    samples (or a flat top that reaches either) are never maxima.
    """
    if len(x) < 3:
        return np.zeros(0, dtype=np.intp)
    # runs of equal values: where each starts and ends, and its value
    change = np.flatnonzero(x[1:] != x[:-1]) + 1
    first = np.concatenate(([0], change))
    last = np.concatenate((change - 1, [len(x) - 1]))
    value = x[first]
    top = np.zeros(len(first), dtype=bool)
    top[1:-1] = (value[:-2] < value[1:-1]) & (value[2:] < value[1:-1])
    out: Indices = ((first[top] + last[top]) // 2).astype(np.intp)
    return out


def _sparse_tables(x: Float) -> tuple[Float, Float]:
    """Row k holds the max (min) of ``x[i : i + 2**k]`` at column i (+inf past the end)."""
    levels = max(1, len(x).bit_length())
    maxima = np.full((levels, len(x)), np.inf)
    minima = np.full((levels, len(x)), np.inf)
    maxima[0], minima[0] = x, x
    for k in range(1, levels):
        half, width = 1 << (k - 1), len(x) - (1 << k) + 1
        maxima[k, :width] = np.maximum(maxima[k - 1, :width], maxima[k - 1, half : half + width])
        minima[k, :width] = np.minimum(minima[k - 1, :width], minima[k - 1, half : half + width])
    return maxima, minima


def prominences(x: Float, peaks: Indices) -> Float:
    """Each peak's height above the higher of its two bases (scipy's *prominence*).

    A peak's base on one side is the lowest point between it and the first strictly
    higher sample on that side (or the end of the signal). For all peaks at once: the
    walk to that higher sample by binary lifting over a table of block maxima, then the
    minimum over the walked range from a table of block minima; O(n log n), exact.
    """
    if not len(peaks):
        return np.zeros(0)
    maxima, minima = _sparse_tables(x)
    height = x[peaks]
    left = peaks.copy()  # x[left : peak + 1] <= height
    right = peaks.copy()  # x[peak : right + 1] <= height
    for k in range(len(maxima) - 1, -1, -1):
        step = 1 << k
        start = np.maximum(left - step, 0)
        grow = (left >= step) & (maxima[k, start] <= height)
        left = np.where(grow, left - step, left)
        start = np.minimum(right + 1, len(x) - 1)
        grow = (right + step < len(x)) & (maxima[k, start] <= height)
        right = np.where(grow, right + step, right)
    out: Float = height - np.maximum(
        _range_min(minima, left, peaks), _range_min(minima, peaks, right)
    )
    return out


def _range_min(minima: Float, first: Indices, last: Indices) -> Float:
    """min(x[first : last + 1]) per pair, from two overlapping power-of-two blocks."""
    k = np.frexp((last - first + 1).astype(np.float64))[1] - 1  # floor(log2(length))
    out: Float = np.minimum(minima[k, first], minima[k, last - (1 << k) + 1])
    return out


def find_peaks(x: Float, height: float, prominence: float) -> Indices:
    """Local maxima at least ``height`` high and ``prominence`` above their bases.

    ``scipy.signal.find_peaks(x, height=height, prominence=prominence)[0]`` for finite x.
    """
    x = np.asarray(x, dtype=np.float64)
    peaks = local_maxima(x)
    peaks = peaks[x[peaks] >= height]
    kept: Indices = peaks[prominences(x, peaks) >= prominence]
    return kept
