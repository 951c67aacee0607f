"""What the linear echo filter leaves, taken down further: a spectral residual echo
suppressor for ``echo_mdf`` that leaves the room's noise floor alone.

Per frequency bin, the residual echo is estimated as the filter's own echo estimate
times its leakage (the share of the echo's power the filter has been leaving), kept
from falling faster than the room's reverberation. Only a bin whose residual echo is
above the room's noise floor there is touched: it is scaled by
``1 - over * residual / power``, but never below the noise floor (nor below ``floor``).
So the steady noise of the room passes as it is, with no gating the recognizer could
take for words, and where a person's voice fills a bin its power is far above the
residual echo and the gain stays near 1: the person passes.

The noise floor per bin follows the output's smoothed power down at once and up by at
most ``NOISE_RISE_DB`` per frame (minimum tracking): echo and speech come and go faster
than it can rise, a steady noise does not.

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
#: How fast the noise floor may rise, dB per 10 ms frame (5 dB a second).
NOISE_RISE_DB = 0.05
#: Smoothing of the output's power per bin that the noise floor follows (per frame).
POWER_SMOOTHING = 0.3


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
        self._smoothed: Float | None = None
        #: The room's noise floor per bin (power, as the analysis gives it); None at first.
        self.noise: Float | None = None

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
        noise = self._track_noise(power)
        gain = np.maximum(self.floor, 1.0 - OVER_SUBTRACTION * self._residual / power)
        gain = np.maximum(gain, np.sqrt(np.minimum(1.0, noise / power)))
        gain = np.where(self._residual > noise, gain, 1.0)
        frame = np.fft.irfft(spectrum * gain, 2 * self.frame_samples) * window
        n = self.frame_samples
        out: Float = self._overlap + frame[:n]
        self._overlap = frame[n:]
        return out

    def _track_noise(self, power: Float) -> Float:
        if self._smoothed is None or self.noise is None:
            self._smoothed = power.copy()
            self.noise = power.copy()
            return self.noise
        self._smoothed += POWER_SMOOTHING * (power - self._smoothed)
        self.noise = np.minimum(self._smoothed, self.noise * 10 ** (NOISE_RISE_DB / 10))
        return self.noise
