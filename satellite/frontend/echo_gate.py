"""What the linear echo filter leaves of the reply, gated out frame by frame while the
satellite speaks: a residual echo gate (a non-linear processor) for ``echo_mdf``.

The canceller knows, in each 10 ms frame, the echo it estimated (the microphone less
its output). Times the share of that power its output has been leaving (the leak, over
the frames this gate took for residual: the canceller's own leak, tracked wherever its
double-talk detector saw no person, learnt a person it missed as echo left and shut
them out), it is the residual echo expected in the output, held from falling faster
than the room rings down. A frame
whose output is not ``margin_db`` above that expectation plus the room's noise floor
holds nothing but the satellite's own voice and is taken down, by at most ``depth_db``
and never below the noise floor (so the room's steady noise goes on as it was: no
silence cut into it for the recognizer or the VAD to take for a pause or a sound). A
frame above it, or one the canceller's double-talk detector holds for a person, passes
whole: a person's voice is not in what was played, so their onset rises over the
expectation in its first frame and is not clipped (the gain rises at once), and the
gain stays open ``HOLD_FRAMES`` after (the ends of words) before it falls back over a
few frames. Whole frames, not frequency bins: where a person talks, nothing of their
spectrum is shaped (the spectral suppressor before, ``echo_residual``, cost words).

No delay is added (the decision is on the frame itself); within a frame the gain moves
linearly from the last frame's to the new one (no clicks).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Float = npt.NDArray[np.float64]

#: How far above the expected residual (plus the noise floor) a frame passes, dB.
MARGIN_DB = 9.0
#: The most a frame of residual is taken down, dB.
DEPTH_DB = 30.0
#: Frames (10 ms) the gate stays open after a frame passed.
HOLD_FRAMES = 8
#: How fast the gain falls after that, dB per frame (it rises at once).
RELEASE_DB = 6.0
#: How much of the expected residual is left from one frame to the next (the room
#: ringing on after the reply goes quiet: about -1.4 dB per 10 ms, RT60 0.4 s).
RESIDUAL_DECAY = 0.72
#: How fast the noise floor may rise, dB per 10 ms frame (5 dB a second); it follows
#: the output's smoothed power down at once (minimum tracking).
NOISE_RISE_DB = 0.05
#: Smoothing of the output's power that the noise floor follows (per frame).
POWER_SMOOTHING = 0.3
#: Smoothing of the powers left and estimated that the leak follows (per residual frame).
LEAK_SMOOTHING = 0.1


class ResidualEchoGate:
    """Frames of the canceller's output in, the same frames out (no delay)."""

    def __init__(self, margin_db: float = MARGIN_DB, depth_db: float = DEPTH_DB) -> None:
        self.margin = 10 ** (margin_db / 10)
        self.depth = 10 ** (-depth_db / 20)
        self.reset()

    def reset(self) -> None:
        self._residual = 0.0
        self._left = 0.0  # smoothed power of the output and of the echo estimate, in the
        self._estimated = 0.0  # frames taken for residual
        self._smoothed: float | None = None
        #: The room's noise floor in the output (mean power per sample); None at first.
        self.noise: float | None = None
        self._hold = 0
        #: The gain applied at the end of the last frame (0-1).
        self.gain = 1.0
        #: Frames taken down (gain below 1) and frames seen while playing.
        self.frames_gated = 0
        self.frames_playing = 0

    @property
    def leak(self) -> float:
        """The share of the echo estimate's power the output holds in frames of residual
        only (0-1; 1 until such frames were seen)."""
        if self._estimated <= 0:
            return 1.0
        return min(1.0, self._left / self._estimated)

    def process(self, output: Float, echo_estimate: Float, playing: bool, talking: bool) -> Float:
        """``output`` (the canceller's, this frame) with what is only residual echo taken
        down. ``echo_estimate``: the echo the canceller took out of this frame;
        ``playing``: the far end played lately; ``talking``: its double-talk detector
        holds a person."""
        power = float(np.mean(output**2)) + 1e-3
        noise = self._track_noise(power)
        estimate = float(np.mean(echo_estimate**2))
        self._residual = max(self.leak * estimate, RESIDUAL_DECAY * self._residual)
        target = 1.0
        if playing:
            self.frames_playing += 1
            if talking or power >= self.margin * (self._residual + noise):
                self._hold = HOLD_FRAMES
            elif self._hold > 0:
                self._hold -= 1
            else:  # residual only: what the output leaves of the estimate
                self._left += LEAK_SMOOTHING * (power - self._left)
                self._estimated += LEAK_SMOOTHING * (estimate - self._estimated)
                target = max(self.depth, float(np.sqrt(min(1.0, noise / power))))
        else:
            self._hold = 0
        start = self.gain
        if target < start:
            target = max(target, start * 10 ** (-RELEASE_DB / 20))
        self.gain = target
        if start == 1.0 and target == 1.0:
            return output
        if target < 1.0:
            self.frames_gated += 1
        if target >= start:  # up at once: a person's onset is not faded in
            risen: Float = output * target
            return risen
        ramp = np.linspace(start, target, len(output), endpoint=False) + (target - start) / len(
            output
        )
        gated: Float = output * ramp
        return gated

    def _track_noise(self, power: float) -> float:
        if self._smoothed is None or self.noise is None:
            self._smoothed = power
            self.noise = power
            return power
        self._smoothed += POWER_SMOOTHING * (power - self._smoothed)
        self.noise = min(self._smoothed, self.noise * 10 ** (NOISE_RISE_DB / 10))
        return self.noise
