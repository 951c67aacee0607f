"""Automatic gain control on 10 ms frames (numpy).

The speech level is followed with a fast attack and slow release, but only on frames
clearly above the tracked noise floor, so silence and steady noise never pump the gain
up. The gain moves smoothly towards ``target - level`` (at most ``max_gain_db``) and is
limited so no sample clips.
"""

from __future__ import annotations

import math

import numpy as np

from ..audio.chunk import AudioChunk

_FRAME_DB_FLOOR = -90.0
#: A frame counts as speech-level when it is this far above the noise floor, dB.
_SPEECH_OVER_NOISE_DB = 10.0
#: ... and above this absolute level, dBFS (quieter frames never raise the gain).
_MIN_SPEECH_DBFS = -55.0
_ATTACK = 0.3
_RELEASE_DB_PER_FRAME = 0.02
_NOISE_RISE_DB_PER_FRAME = 0.01
_GAIN_SMOOTHING = 0.05


class AutoGain:
    """Digital AGC that brings speech towards ``target_dbfs``."""

    name = "gain"

    def __init__(self, target_dbfs: float, max_gain_db: float) -> None:
        self.target_dbfs = target_dbfs
        self.max_gain_db = max_gain_db
        self.reset()

    def reset(self) -> None:
        self._level_db: float | None = None
        self._noise_db: float | None = None
        self._gain_db = 0.0

    @property
    def gain_db(self) -> float:
        """The gain currently applied, dB."""
        return self._gain_db

    def process(self, frame: AudioChunk) -> AudioChunk:
        samples = frame.to_int16().astype(np.float32)
        power = float(np.dot(samples, samples)) / max(len(samples), 1)
        frame_db = 10.0 * math.log10(power / (32768.0**2)) if power > 0 else _FRAME_DB_FLOOR
        frame_db = max(frame_db, _FRAME_DB_FLOOR)

        if self._noise_db is None or frame_db < self._noise_db:
            self._noise_db = frame_db
        else:
            self._noise_db += _NOISE_RISE_DB_PER_FRAME

        if frame_db > max(self._noise_db + _SPEECH_OVER_NOISE_DB, _MIN_SPEECH_DBFS):
            if self._level_db is None or frame_db > self._level_db:
                self._level_db = (
                    frame_db
                    if self._level_db is None
                    else self._level_db + _ATTACK * (frame_db - self._level_db)
                )
            else:
                self._level_db -= _RELEASE_DB_PER_FRAME

        if self._level_db is not None:
            wanted = min(self.target_dbfs - self._level_db, self.max_gain_db)
            self._gain_db += _GAIN_SMOOTHING * (wanted - self._gain_db)

        if abs(self._gain_db) < 0.05:
            return frame
        factor = 10.0 ** (self._gain_db / 20.0)
        peak = float(np.max(np.abs(samples))) if len(samples) else 0.0
        if peak * factor > 32000.0:
            factor = 32000.0 / peak
        out = np.clip(np.round(samples * factor), -32768, 32767).astype("<i2")
        return AudioChunk(
            frame.rate_hz, frame.width_bytes, frame.channels, out.tobytes(), frame.timestamp_seconds
        )
