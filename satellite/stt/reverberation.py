"""How reverberant the room is, from the speech itself: the steepest fall of its energy.

When a sound stops in a dry room its energy falls to the noise floor within a frame or
two; in a reverberant one it can fall no faster than the room lets it, 60 dB per
reverberation time (RT60). So the steepest fall of the energy over ``FALL_FRAMES`` frames,
anywhere in an utterance (word ends, stops, its end), bounds the room's reverberation time
from above: ``60 dB / (that fall per second)``. Measured over the loud part only
(``LOUD_RANGE_DB`` below the utterance's loudest frame), so a quiet room's floor does not
limit it.
"""

from __future__ import annotations

import numpy as np

#: 10 ms frames at 16 kHz.
_FRAME_SAMPLES = 160
#: The fall is measured over this many frames (30 ms: a dry room's word end falls
#: 20-40 dB in it; RT60 0.35 s only ~5 dB).
FALL_FRAMES = 3
#: Frames this far below the loudest are not where a fall is measured from, dB.
LOUD_RANGE_DB = 30.0
#: The least estimate given (a dry room), s.
DRY_SECONDS = 0.02


def reverberation_seconds(audio: bytes) -> float | None:
    """An upper bound of the reverberation time (RT60) heard in 16-bit mono 16 kHz
    ``audio`` (speech with some quiet after it), s; None when it is too short."""
    samples = np.frombuffer(audio, dtype="<i2").astype(np.float64)
    count = len(samples) // _FRAME_SAMPLES
    if count <= FALL_FRAMES + 1:
        return None
    frames = samples[: count * _FRAME_SAMPLES].reshape(count, _FRAME_SAMPLES)
    level_db = 10.0 * np.log10(np.square(frames).mean(axis=1) + 1.0)
    loud = level_db[:-FALL_FRAMES] >= level_db.max() - LOUD_RANGE_DB
    if not loud.any():
        return None
    fall_db = level_db[:-FALL_FRAMES] - level_db[FALL_FRAMES:]
    steepest = float(fall_db[loud].max())
    if steepest <= 0.0:
        return None
    per_second = steepest / (FALL_FRAMES * _FRAME_SAMPLES / 16000.0)
    return round(max(DRY_SECONDS, 60.0 / per_second), 4)
