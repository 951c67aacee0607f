"""Noise suppression engines (10 ms frames)."""

from __future__ import annotations

from typing import Any

from ..audio.chunk import FRAME_BYTES, AudioChunk
from ..errors import AudioFormatError, MissingDependencyError
from .base import FrameFilter
from .settings import WAKE_WEBRTC_LEVEL


def _check_frame(frame: AudioChunk) -> None:
    if len(frame.samples) != FRAME_BYTES or not frame.is_pipeline_format:
        raise AudioFormatError(
            f"Noise suppression needs 10 ms frames of 16 kHz 16-bit mono "
            f"({FRAME_BYTES} bytes), got {len(frame.samples)} bytes at {frame.rate_hz} Hz"
        )


def _replace(frame: AudioChunk, samples: bytes) -> AudioChunk:
    return AudioChunk(
        frame.rate_hz, frame.width_bytes, frame.channels, samples, frame.timestamp_seconds
    )


class SpeexNoiseSuppressor:
    """``pyspeex-noise`` with its auto gain off.

    Speex's own AGC is disabled on purpose: with any non-zero ``auto_gain`` it
    outputs near-silence. Gain is a separate stage.
    """

    name = "noise"

    def __init__(self, suppression_db: int) -> None:
        try:
            from pyspeex_noise import AudioProcessor  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("pyspeex-noise", None, "Speex noise suppression") from err
        self._factory = AudioProcessor
        self._suppression_db = suppression_db
        self._processor: Any = self._make()

    def _make(self) -> Any:
        return self._factory(auto_gain=0, noise_suppression=-self._suppression_db)

    def process(self, frame: AudioChunk) -> AudioChunk:
        _check_frame(frame)
        return _replace(frame, self._processor.process_10ms(frame.samples))

    def reset(self) -> None:
        self._processor = self._make()


class WebRtcNoiseSuppressor:
    """``webrtc-noise-gain``: noise suppression, optionally with its own AGC."""

    name = "noise"

    def __init__(self, level: int, auto_gain_dbfs: int) -> None:
        try:
            from webrtc_noise_gain import AudioProcessor  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError(
                "webrtc-noise-gain", None, "WebRTC noise suppression"
            ) from err
        self._factory = AudioProcessor
        self._level = level
        self._auto_gain_dbfs = auto_gain_dbfs
        self._processor: Any = self._make()

    def _make(self) -> Any:
        return self._factory(self._auto_gain_dbfs, self._level)

    def process(self, frame: AudioChunk) -> AudioChunk:
        _check_frame(frame)
        return _replace(frame, self._processor.Process10ms(frame.samples).audio)

    def reset(self) -> None:
        self._processor = self._make()


class PassThrough:
    """No processing (noise suppression or gain turned off)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def process(self, frame: AudioChunk) -> AudioChunk:
        return frame

    def reset(self) -> None:
        """Nothing to forget."""


def make_noise_suppressor(
    engine: str, suppression_db: int, webrtc_level: int, webrtc_auto_gain_dbfs: int = 0
) -> FrameFilter:
    """Build the configured noise suppressor."""
    if engine == "speex":
        return SpeexNoiseSuppressor(suppression_db)
    if engine == "webrtc":
        return WebRtcNoiseSuppressor(webrtc_level, webrtc_auto_gain_dbfs)
    if engine == "off":
        return PassThrough("noise")
    raise ValueError(f"Unknown noise engine {engine!r}; use speex, webrtc or off")


def make_wake_ears(hears: str) -> FrameFilter | None:
    """What the wake word hears the microphone through (``frontend.wake.hears``): its
    own WebRTC suppression, the microphone as it is, or (None) the denoised audio."""
    if hears == "webrtc":
        return make_noise_suppressor("webrtc", 0, WAKE_WEBRTC_LEVEL)
    if hears == "raw":
        return PassThrough("wake_ears")
    return None
