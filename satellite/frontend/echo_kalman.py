"""How ``echo_mdf``'s background filter learns with ``adaptation: kalman``: a
partitioned-block frequency-domain Kalman filter (the state-space view of the adaptive
filter: Enzner & Vary 2006, "Frequency-domain adaptive Kalman filter for acoustic echo
control in hands-free telephones"; Kuech, Mabande & Enzner 2014 for partitions).

Each partition's weight in each frequency bin is a state whose uncertainty (the state
error variance ``P``) the filter keeps: a weight it has learnt well gets small steps, one
it has not (a bin speech has not excited yet, a partition of a new room) large ones.
The gain of a bin is its share of the error the far end can explain
(``sum over partitions of P |X|^2``) against the near end's power there (``psi``, the
observation noise: the room's noise, a person talking), estimated from the error itself.
So the step is near one while the filter is far from the room and the room is quiet,
and it shrinks by itself where a person talks over the reply: their voice inflates
``psi`` (the double-talk detector of ``echo_mdf`` then holds the filter still as well,
once it has learnt enough to tell). A transition factor ``TRANSITION`` just below one
keeps some uncertainty in every weight (process noise ``(1 - A^2) |W|^2``), so the
filter follows a room that changes.

Cost per 10 ms frame: a few element-wise passes over partitions x bins, about what an
NLMS step costs (bench/echo.py, ``cpu_ms_per_frame``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Float = npt.NDArray[np.float64]
Complex = npt.NDArray[np.complex128]

#: The state transition factor A (0-1): how much of a weight is kept from frame to frame;
#: ``1 - A^2`` of a partition's mean weight power is added to the uncertainty of each of
#: its weights every frame (process noise: the filter keeps following the room).
TRANSITION = 0.9999
#: The step (0-1) on the Kalman gain.
STEP = 1.0
#: A new filter's uncertainty per weight in its first partition (|W|^2 units; a room's
#: response has about 1 in all) ...
INITIAL_UNCERTAINTY = 0.1
#: ... falling by this much per partition (dB; a room's echo decays: 60 dB per RT60, 1 dB
#: per 10 ms partition is an RT60 of 0.6 s), so a new filter learns the start of the
#: room's response first (2 dB learnt RT60 0.2 s faster and 0.6 s far slower).
PRIOR_DECAY_DB = 1.0
#: Smoothing of the near-end power estimate per bin (0-1: the share of the new frame).
NOISE_SMOOTHING = 0.1
#: The near-end power estimate never falls below this, per bin (|E|^2 units: int16 squared
#: times half a block).
NOISE_FLOOR = 1000.0
#: A filter that takes out little is kept at least this uncertain (share of the start's).
REOPEN_SHARE = 0.2


class KalmanAdaptation:
    """The state error variance ``P`` of each partition x bin and the near end's power per
    bin; :meth:`gradient` gives the (unconstrained) step of the filter for one frame."""

    def __init__(self, partitions: int, bins: int) -> None:
        self.partitions = partitions
        self.bins = bins
        self.reset()

    def reset(self) -> None:
        """A new filter (or a moved speaker): every weight as uncertain as at the start."""
        decay = 10 ** (-PRIOR_DECAY_DB * np.arange(self.partitions) / 10)
        self._prior: Float = INITIAL_UNCERTAINTY * decay  # per partition
        #: The state error variance ``P`` per partition x bin (|W|^2 units).
        self.uncertainty: Float = np.outer(self._prior, np.ones(self.bins))
        #: The near end's power per bin (|E|^2 units), as estimated from the error.
        self.near_power: Float = np.full(self.bins, NOISE_FLOOR)

    def remembered(self, weights: Complex, far: tuple[Complex, Float], near: Float) -> Complex:
        """The summed step of ``weights`` for remembered frames (data reuse), all at once:
        their far end (``FarHistory.stack``: spectra and power, frames x partitions x
        bins) and their microphone (frames x samples). ``P`` stays as it is."""
        spectra, power = far
        n = near.shape[1]
        blocks = np.zeros((len(near), 2 * n))
        estimate = np.fft.irfft(np.sum(spectra * weights, axis=1), 2 * n, axis=1)
        blocks[:, n:] = near - estimate[:, n:]
        errors = np.fft.rfft(blocks, axis=1)
        explained = np.einsum("pk,rpk->rk", self.uncertainty, power)
        scaled = errors * (STEP / (explained + 2.0 * self.near_power))
        step: Complex = np.conj(spectra[0]) * scaled[0]
        for frame in range(1, len(scaled)):
            step += np.conj(spectra[frame]) * scaled[frame]
        step *= self.uncertainty
        return step

    def gradient(self, error: Complex, spectra: Complex, power: Float, weights: Complex) -> Complex:
        """The step of ``weights`` (partitions x bins) for a new frame: its error spectrum
        (``rfft`` of half a block of zeros and the error), its far-end ``spectra`` and
        their ``power``; updates ``P`` and the near-end estimate."""
        uncertainty = self.uncertainty
        uncertainty = self.uncertainty
        weighted = uncertainty * power  # P |X|^2
        explained = np.sum(weighted, axis=0)  # per bin, over partitions
        error_power = error.real**2 + error.imag**2
        # The error is what the far end explains (half of it: the block's first half is
        # zero) plus the near end: what is more than the far end explains is near end.
        near = np.maximum(error_power - 0.5 * explained, NOISE_FLOOR)
        self.near_power += NOISE_SMOOTHING * (near - self.near_power)
        scale = STEP / (explained + 2.0 * self.near_power)  # the gain is P conj(X) scale
        step: Complex = np.conj(spectra) * (uncertainty * (error * scale))
        # P = A^2 (P - P |X|^2 P scale / 2) + (1 - A^2) (a partition's mean |W|^2)
        a2 = TRANSITION**2
        flat = weights.view(np.float64)  # real and imaginary parts side by side
        drift = (1.0 - a2) / self.bins * np.einsum("pk,pk->p", flat, flat)
        weighted *= uncertainty
        weighted *= (0.5 * a2) * scale
        uncertainty *= a2
        uncertainty -= weighted
        uncertainty += drift[:, None]
        return step

    def reopen(self) -> None:
        """Every weight at least ``REOPEN_SHARE`` of its start's uncertainty: for a filter
        that takes out little of what it hears (``echo_mdf`` calls it then). A speaker
        muted for a while leaves a filter sure the room has no echo, which would learn
        the room very slowly once it is heard (0-8 dB over the first reply after 36 s
        muted; 4-24 dB so reopened)."""
        np.maximum(self.uncertainty, REOPEN_SHARE * self._prior[:, None], out=self.uncertainty)
