"""A downward expander for what the wake word hears: a room of other voices is pushed
down between the loud person's syllables.

In a room of other voices (babble, a television, people talking) 10 dB below the person
speaking to the satellite, the wake word model heard "okay nabu" in a fifth to a third
of the scenes: the others' voices fill the gaps between its syllables. The person is
louder than the room (closer to the microphone). ``DownwardExpander`` follows the room's
floor (a low percentile of the last few seconds' levels) and the speech's peak (a high
one) and turns every frame below the midpoint between them down, ``ratio - 1`` dB for
each dB it lies below, at most ``depth_db``; frames at the person's level pass as they
are. No suppressor does this: babble is speech, so speex and WebRTC leave it. A steady
room (a fan, hiss) is left alone: the model hears those well, and turned down they
lost it a few scenes. The wake word alone hears the result; the recognizer does not.

Measured on the corpus (bench/wake_expander.py; the README, "The wake word").
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from ..audio.chunk import AudioChunk

#: Frames averaged into one level (50 ms).
SMOOTH_FRAMES = 5
#: The room's floor and the speech's peak: these percentiles of the last
#: ``HISTORY_FRAMES`` levels, recomputed every ``EVERY_FRAMES`` frames.
FLOOR_PERCENTILE = 20.0
PEAK_PERCENTILE = 95.0
HISTORY_FRAMES = 300
EVERY_FRAMES = 10
#: A room is steady (a fan, hiss: nothing turned down) when the 30th percentile of its
#: levels lies less than ``STEADY_SPREAD_DB`` above the 10th (both below the person's
#: speech while it fills up to 70 % of the history). After WebRTC level 2 (Festival's
#: scenes of bench/wake_expander.py): white and pink noise at 10 dB, a quiet room's floor
#: and a reverberant room 0.3-1.0 dB; babble, a television and people talking at 10-20
#: dB 3.3-10.8 dB. Turned down, white noise at 10 dB lost the model 2 of Festival's 16
#: scenes.
STEADY_PERCENTILES = (10.0, 30.0)
STEADY_SPREAD_DB = 2.0
#: The gain comes back up at once and falls this share of the way a frame (~30 ms).
RELEASE = 0.3
#: dB turned down per dB below the threshold, plus one (4: 3 dB for each dB).
RATIO = 4.0
#: The threshold: this share of the way from the room's floor to the speech's peak.
SHARE = 0.5
#: An empty frame's level, dB (of int16 samples squared).
_QUIET_DB = -30.0


class DownwardExpander:
    """Turns down frames nearer the room's floor than the person (see above)."""

    name = "wake_expander"

    def __init__(self, depth_db: float, ratio: float = RATIO, share: float = SHARE) -> None:
        if depth_db <= 0 or ratio <= 1 or not 0 < share < 1:
            raise ValueError("depth_db > 0, ratio > 1 and 0 < share < 1 are needed")
        self.depth_db = depth_db
        self.ratio = ratio
        self.share = share
        self._recent: deque[float] = deque(maxlen=SMOOTH_FRAMES)
        self._history: deque[float] = deque(maxlen=HISTORY_FRAMES)
        self._frames = 0
        self._threshold_db = -math.inf
        self._gain = 1.0

    @property
    def turning_down(self) -> bool:
        """Whether the room is one of other voices (not steady): frames below the
        person's level are being turned down."""
        return self._threshold_db > -math.inf

    def process(self, frame: AudioChunk) -> AudioChunk:
        samples = frame.to_int16().astype(np.float32)
        level = 10.0 * math.log10(float(np.mean(samples * samples)) + 1e-3)
        level = max(level, _QUIET_DB)
        self._recent.append(level)
        smooth = sum(self._recent) / len(self._recent)
        self._history.append(smooth)
        if self._frames % EVERY_FRAMES == 0:
            low, floor, middle, peak = np.percentile(
                self._history,
                (STEADY_PERCENTILES[0], FLOOR_PERCENTILE, STEADY_PERCENTILES[1], PEAK_PERCENTILE),
            )
            steady = middle - low < STEADY_SPREAD_DB
            self._threshold_db = -math.inf if steady else float(floor + self.share * (peak - floor))
        self._frames += 1
        # a syllable's onset is heard at once: the louder of the frame and the smoothed
        below = max(0.0, self._threshold_db - max(level, smooth))
        target = 10.0 ** (-min(self.depth_db, below * (self.ratio - 1.0)) / 20.0)
        if target >= self._gain:
            self._gain = target
        else:
            self._gain += RELEASE * (target - self._gain)
        if self._gain >= 0.999:
            return frame
        out = np.round(samples * self._gain).astype(np.int16)
        return AudioChunk.from_int16(out, frame.rate_hz, frame.timestamp_seconds, frame.channels)

    def reset(self) -> None:
        self._recent.clear()
        self._history.clear()
        self._frames = 0
        self._threshold_db = -math.inf
        self._gain = 1.0
