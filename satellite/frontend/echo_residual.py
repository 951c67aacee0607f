"""What the linear echo filter leaves, taken down further: a spectral residual echo
suppressor for ``echo_mdf``.

Per frequency bin, the residual echo is estimated as the filter's own echo estimate
times its leakage (the share of the echo's power the filter has been leaving), kept
from falling faster than the room's reverberation; the bin is scaled by
``1 - over * residual / power`` (at least ``floor``). Where a person's voice fills a bin
its power is far above the residual echo and the gain stays near 1: the person passes.

Short-time Fourier analysis with square-root Hann windows of 2 x 160 samples and a
160-sample hop (overlap-add), so the output comes one frame (10 ms) late.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Float = npt.NDArray[np.float64]

#: The residual echo is over-estimated by this factor before it is taken out (the leak is
#: an average over the last frames; a reply's new sounds leave more).
OVER_SUBTRACTION = 10.0
#: How much of the residual estimate is left from one frame to the next (reverberation).
RESIDUAL_DECAY = 0.85


class ResidualEchoSuppressor:
    """Frames of ``frame_samples``; output one frame late."""

    def __init__(self, frame_samples: int = 160, suppression_db: float = 20.0) -> None:
        self.frame_samples = frame_samples
        self.floor = 10 ** (-suppression_db / 20)
        n = frame_samples
        self._window = np.sqrt(np.hanning(2 * n + 1)[: 2 * n])
        self.reset()

    def reset(self) -> None:
        n = self.frame_samples
        self._error_prev = np.zeros(n)
        self._echo_prev = np.zeros(n)
        self._overlap = np.zeros(n)
        self._residual = np.zeros(n + 1)

    def process(self, error: Float, echo_estimate: Float, leak: float) -> Float:
        """The previous frame of ``error`` with the residual echo taken down."""
        window = self._window
        spectrum = np.fft.rfft(np.concatenate([self._error_prev, error]) * window)
        echo = np.fft.rfft(np.concatenate([self._echo_prev, echo_estimate]) * window)
        self._error_prev = error
        self._echo_prev = echo_estimate
        residual = leak * np.abs(echo) ** 2
        self._residual = np.maximum(residual, RESIDUAL_DECAY * self._residual)
        power = np.abs(spectrum) ** 2 + 1e-3
        gain = np.maximum(self.floor, 1.0 - OVER_SUBTRACTION * self._residual / power)
        frame = np.fft.irfft(spectrum * gain, 2 * self.frame_samples) * window
        n = self.frame_samples
        out: Float = self._overlap + frame[:n]
        self._overlap = frame[n:]
        return out
