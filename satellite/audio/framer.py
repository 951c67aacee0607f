"""Re-chunk audio of any size into 10 ms pipeline frames."""

from __future__ import annotations

from collections.abc import Iterator

from .chunk import FRAME_BYTES, FRAME_SAMPLES, PIPELINE_RATE_HZ, AudioChunk, to_pipeline_format


class Framer:
    """Collects chunks and yields whole 10 ms frames of 16 kHz mono 16-bit audio.

    A frame's timestamp is derived from the chunk it ends in, so gaps in the input's
    timestamps carry through; leftover bytes wait for the next chunk.
    """

    def __init__(self) -> None:
        self._pending = b""

    def push(self, chunk: AudioChunk) -> Iterator[AudioChunk]:
        """Yield every complete frame now available."""
        chunk = to_pipeline_format(chunk)
        pending_seconds = len(self._pending) // 2 / PIPELINE_RATE_HZ
        start = chunk.timestamp_seconds - pending_seconds
        data = self._pending + chunk.samples
        whole = len(data) - len(data) % FRAME_BYTES
        for index, offset in enumerate(range(0, whole, FRAME_BYTES)):
            yield AudioChunk(
                PIPELINE_RATE_HZ,
                2,
                1,
                data[offset : offset + FRAME_BYTES],
                round(start + index * FRAME_SAMPLES / PIPELINE_RATE_HZ, 6),
            )
        self._pending = data[whole:]

    def reset(self) -> None:
        """Drop buffered bytes."""
        self._pending = b""
