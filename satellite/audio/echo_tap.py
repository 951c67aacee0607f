"""A sink that tells who listens what it sends to the sound card, and when.

The echo canceller needs the exact samples the speaker plays and the moment they go
to the device; wrapping the sink keeps the player unaware of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .chunk import AudioChunk
from .io import AudioSink


class EchoTap:
    """Writes to ``sink``, then calls ``heard(chunk, monotonic seconds when the write
    returned)``: from then on the chunk waits in the device queue, then plays. A flush
    (the player stopping) goes to the sink when it has one, and ``flushed()`` is told:
    what was queued will not play."""

    def __init__(
        self,
        sink: AudioSink,
        heard: Callable[[AudioChunk, float], None],
        clock: Callable[[], float] = time.monotonic,
        flushed: Callable[[], None] | None = None,
    ) -> None:
        self.sink = sink
        self.heard = heard
        self.clock = clock
        self.flushed = flushed

    def write(self, chunk: AudioChunk) -> None:
        self.sink.write(chunk)
        self.heard(chunk, self.clock())

    def flush(self) -> int:
        """Drop the audio queued for the device; return its size in bytes."""
        flush = getattr(self.sink, "flush", None)
        dropped = int(flush()) if callable(flush) else 0
        if self.flushed is not None:
            self.flushed()
        return dropped

    def close(self) -> None:
        self.sink.close()
