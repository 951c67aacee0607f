"""The unit of audio that moves through the satellite."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..errors import AudioFormatError

#: The pipeline's native format: 16 kHz, 16-bit signed little-endian, mono.
PIPELINE_RATE_HZ = 16000
PIPELINE_WIDTH_BYTES = 2
PIPELINE_CHANNELS = 1
#: One pipeline frame is 10 ms.
FRAME_MS = 10
FRAME_SAMPLES = PIPELINE_RATE_HZ * FRAME_MS // 1000
FRAME_BYTES = FRAME_SAMPLES * PIPELINE_WIDTH_BYTES


@dataclass(frozen=True, slots=True)
class AudioChunk:
    """A piece of PCM audio that knows its own format and when it started.

    ``samples`` holds interleaved little-endian signed PCM; ``timestamp_seconds`` is
    the time of the first sample, in seconds from the start of the input.
    """

    rate_hz: int
    width_bytes: int
    channels: int
    samples: bytes = field(repr=False)
    timestamp_seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.rate_hz <= 0:
            raise AudioFormatError(f"Sample rate must be positive, got {self.rate_hz} Hz")
        if self.width_bytes not in (1, 2, 4):
            raise AudioFormatError(f"Sample width must be 1, 2 or 4 bytes, got {self.width_bytes}")
        if self.channels < 1:
            raise AudioFormatError(f"Channel count must be at least 1, got {self.channels}")
        if len(self.samples) % self.bytes_per_frame:
            raise AudioFormatError(
                f"{len(self.samples)} bytes is not a whole number of "
                f"{self.bytes_per_frame}-byte sample frames"
            )

    @property
    def bytes_per_frame(self) -> int:
        """Bytes in one sample frame (all channels)."""
        return self.width_bytes * self.channels

    @property
    def num_frames(self) -> int:
        """Number of sample frames (samples per channel)."""
        return len(self.samples) // self.bytes_per_frame

    @property
    def seconds(self) -> float:
        """Duration in seconds."""
        return self.num_frames / self.rate_hz

    @property
    def end_seconds(self) -> float:
        """Time just after the last sample, in seconds from the start of the input."""
        return self.timestamp_seconds + self.seconds

    @property
    def is_pipeline_format(self) -> bool:
        """True when the chunk is 16 kHz, 16-bit mono."""
        return (
            self.rate_hz == PIPELINE_RATE_HZ
            and self.width_bytes == PIPELINE_WIDTH_BYTES
            and self.channels == PIPELINE_CHANNELS
        )

    def to_int16(self) -> npt.NDArray[np.int16]:
        """Return mono 16-bit samples (requires 16-bit audio)."""
        if self.width_bytes != 2:
            raise AudioFormatError(f"Expected 16-bit audio, got {8 * self.width_bytes}-bit")
        return np.frombuffer(self.samples, dtype="<i2")

    @classmethod
    def from_int16(
        cls,
        samples: npt.NDArray[np.int16],
        rate_hz: int = PIPELINE_RATE_HZ,
        timestamp_seconds: float = 0.0,
        channels: int = 1,
    ) -> AudioChunk:
        """Build a 16-bit chunk from an int16 array."""
        return cls(
            rate_hz=rate_hz,
            width_bytes=2,
            channels=channels,
            samples=np.ascontiguousarray(samples, dtype="<i2").tobytes(),
            timestamp_seconds=timestamp_seconds,
        )


def join_frames(frames: Sequence[AudioChunk]) -> AudioChunk:
    """Consecutive chunks of one format as one chunk, starting when the first does."""
    first = frames[0]
    return AudioChunk(
        first.rate_hz,
        first.width_bytes,
        first.channels,
        b"".join(frame.samples for frame in frames),
        first.timestamp_seconds,
    )


def to_pipeline_format(chunk: AudioChunk) -> AudioChunk:
    """Convert any chunk to 16 kHz, 16-bit mono (downmix, requantise, resample)."""
    if chunk.is_pipeline_format:
        return chunk
    audio = to_float_mono(chunk)
    if chunk.rate_hz != PIPELINE_RATE_HZ:
        audio = resample(audio, chunk.rate_hz, PIPELINE_RATE_HZ)
    return AudioChunk.from_int16(float_to_int16(audio), timestamp_seconds=chunk.timestamp_seconds)


def to_float_mono(chunk: AudioChunk) -> npt.NDArray[np.float32]:
    """Samples as float32 in [-1, 1], channels averaged."""
    raw = chunk.samples
    if chunk.width_bytes == 1:
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif chunk.width_bytes == 2:
        data = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    else:
        data = np.frombuffer(raw, dtype="<i4").astype(np.float32) / 2147483648.0
    if chunk.channels > 1:
        data = data.reshape(-1, chunk.channels).mean(axis=1)
    return data.astype(np.float32, copy=False)


def float_to_int16(audio: npt.NDArray[np.floating]) -> npt.NDArray[np.int16]:
    """Clip float audio in [-1, 1] to int16."""
    return np.clip(np.round(audio * 32768.0), -32768, 32767).astype(np.int16)


def resample(
    audio: npt.NDArray[np.float32], from_rate_hz: int, to_rate_hz: int
) -> npt.NDArray[np.float32]:
    """High-quality resampling of float mono audio (soxr)."""
    if from_rate_hz == to_rate_hz:
        return audio
    import soxr  # noqa: PLC0415 - numpy-only callers should not pay for soxr

    out: npt.NDArray[np.float32] = soxr.resample(audio, from_rate_hz, to_rate_hz).astype(
        np.float32, copy=False
    )
    return out
