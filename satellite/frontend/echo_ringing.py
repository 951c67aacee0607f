"""What the canceller will leave of the satellite's own voice, predicted from what it played.

In a ringing room (RT60 0.6 s) the room rings on past the canceller's filter (200 ms):
what it leaves of the reply is not a fixed fraction of what the microphone hears (the
double-talk gate's prediction, ``stt.keywords.DoubleTalkGate``) but the late part of
everything played in the last few hundred milliseconds. ``ResidualModel`` predicts the
power of the canceller's output in each 10 ms frame as a non-negative sum of the played
reference's power over the last ``TAPS`` frames (an envelope of the room's ringing, and
of what the filter misses of the early echo), fitted by least squares on the frames of
the replies the satellite played alone (as ``LearntMargin`` learns: a reply someone
spoke over is not learnt from). A person, whom the reference does not hold, rises above
that prediction at once; the satellite's own ringing does not.

Measured on a simulated room (``python -m bench.duplex_talk_over``,
bench/results/duplex_talk_over*.json).
"""

from __future__ import annotations

from collections import deque

import numpy as np
import numpy.typing as npt

#: Frames (10 ms) of the reference's power history the prediction sums over.
TAPS = 40
#: What the statistics of the replies before keep at each new reply learnt (0-1).
KEEP = 0.7
#: Frames before a window over which the noise floor is measured.
HISTORY_FRAMES = 150
#: The noise floor: this percentile of the canceller's output power over the history.
NOISE_PERCENTILE = 10
#: Iterations of the non-negative least-squares solver at each reply learnt.
SOLVER_STEPS = 300
#: Frames of a reply before its measure is taken: at a reply's start the canceller, back
#: from a pause or from a person who spoke over the reply before, leaves more of the
#: echo than the prediction for a while (seen up to 12 dB over it in the first 250 ms).
SETTLE_FRAMES = 50
#: Powers are scaled by this before their products are summed (keeps them in range).
SCALE = 1e-6

Vector = npt.NDArray[np.float64]


class ResidualModel:
    """The canceller's output power predicted from the reference's power history.

    ``add`` each 10 ms frame (the reference played into it and the canceller's output;
    ``learn``: the satellite was speaking); ``end_reply`` when a reply played alone to
    its end (learnt), ``start_reply`` when one starts or was spoken over (dropped),
    ``forget`` for a new room."""

    def __init__(self, window_frames: int) -> None:
        self.window_frames = window_frames
        self._lags: Vector = np.zeros(TAPS)  # the reference's power, newest first
        self._out: deque[float] = deque(maxlen=window_frames + HISTORY_FRAMES)
        self._predicted: deque[float] = deque(maxlen=window_frames)
        self._reply = _Statistics()
        self._learnt = _Statistics()
        self._in_reply = 0  # frames of the reply under way (learn) so far
        #: The weights per lag (None: no reply learnt yet, nothing predicted).
        self.weights: Vector | None = None

    def add(self, reference_power: float, output_power: float, learn: bool) -> None:
        """One frame: the reference's power (1: nothing played) and the output's."""
        self._lags = np.roll(self._lags, 1)
        self._lags[0] = max(0.0, reference_power - 1.0) * SCALE
        self._out.append(output_power)
        if self.weights is not None:
            self._predicted.append(float(self.weights @ self._lags) / SCALE)
        if learn:
            self._reply.add(self._lags, output_power * SCALE)
            self._in_reply += 1

    def excess_db(self) -> float | None:
        """Over the last window: the output's power above the prediction plus the noise
        floor, dB (None: nothing learnt yet, too little history, or fewer than
        ``SETTLE_FRAMES`` of the reply played)."""
        if self.weights is None or self._in_reply < max(self.window_frames, SETTLE_FRAMES):
            return None
        if len(self._out) < self._out.maxlen:  # type: ignore[operator]
            return None
        out = np.asarray(self._out)
        history = out[: -self.window_frames]
        floor = float(np.percentile(history, NOISE_PERCENTILE))
        expected = sum(self._predicted) + self.window_frames * floor
        return float(10 * np.log10(out[-self.window_frames :].sum() / expected))

    def frame_over_db(self) -> float | None:
        """The last frame's output power above its prediction plus the noise floor (the
        quietest of the output's history, as ``excess_db``), dB (None: nothing learnt
        yet, or too little history)."""
        if self.weights is None or len(self._out) <= self.window_frames or not self._predicted:
            return None
        floor = float(np.percentile(np.asarray(self._out)[:-1], NOISE_PERCENTILE))
        expected = self._predicted[-1] + floor
        return float(10 * np.log10(max(self._out[-1], 1e-12) / max(expected, 1e-12)))

    def start_reply(self) -> None:
        """A reply starts, or someone spoke over it: nothing of it to learn."""
        self._reply = _Statistics()
        self._in_reply = 0

    def end_reply(self) -> None:
        """The reply played alone to its end: learn from its frames."""
        if self._reply.frames:
            self._learnt.fold(self._reply, KEEP)
            self.weights = self._learnt.solve(self.weights)
        self.start_reply()

    def forget(self) -> None:
        """A new room: nothing learnt."""
        self._lags[:] = 0.0
        self._out.clear()
        self._predicted.clear()
        self._reply, self._learnt = _Statistics(), _Statistics()
        self.weights = None


class _Statistics:
    """Sums of the normal equations of a least-squares fit (lags x lags, lags x output)."""

    def __init__(self) -> None:
        self.gram: Vector = np.zeros((TAPS, TAPS))
        self.cross: Vector = np.zeros(TAPS)
        self.frames = 0

    def add(self, lags: Vector, output: float) -> None:
        self.gram += np.outer(lags, lags)
        self.cross += lags * output
        self.frames += 1

    def fold(self, newer: _Statistics, keep: float) -> None:
        self.gram = keep * self.gram + newer.gram
        self.cross = keep * self.cross + newer.cross
        self.frames += newer.frames

    def solve(self, start: Vector | None) -> Vector | None:
        """Non-negative weights minimising the squared error (projected gradient)."""
        step = float(np.linalg.eigvalsh(self.gram)[-1])
        if step <= 0.0:
            return start
        weights = np.zeros(TAPS) if start is None else start.copy()
        for _ in range(SOLVER_STEPS):
            weights -= (self.gram @ weights - self.cross) / step
            np.maximum(weights, 0.0, out=weights)
        return weights
