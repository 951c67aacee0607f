"""Raw PCM on a byte stream (stdin): 16 kHz, 16-bit little-endian, mono."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from .chunk import FRAME_BYTES, PIPELINE_RATE_HZ, AudioChunk

#: Bytes read per chunk: 100 ms.
READ_BYTES = FRAME_BYTES * 10


class RawStreamSource:
    """Yields 16 kHz mono S16LE chunks from a byte stream until it ends."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[AudioChunk]:
        emitted = 0
        pending = b""
        # read1: what has arrived (up to READ_BYTES), not a wait for all of it: a live
        # stream (arecord | ...) is heard as it comes, not 100 ms at a time.
        read = getattr(self._stream, "read1", self._stream.read)
        while True:
            data = read(READ_BYTES)
            if not data:
                return
            data = pending + data
            whole = len(data) - len(data) % 2
            pending = data[whole:]
            if whole:
                yield AudioChunk(PIPELINE_RATE_HZ, 2, 1, data[:whole], emitted / PIPELINE_RATE_HZ)
                emitted += whole // 2

    def close(self) -> None:
        """The stream belongs to the caller."""
