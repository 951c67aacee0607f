"""Replaying a recording as a live session: a paced source and a paced, gap-filling sink.

``paced(source, clock)`` hands the pipeline 10 ms frames no faster than a microphone
would, on one monotonic clock. ``PacedSink`` stands in for a sound card in front of a
file: it takes audio no faster than it would play (at most ``ahead_seconds`` ahead of the
clock, as a device's buffer would) and writes silence for the time nothing played, so the
output lines up with the input sample for sample and a session can be listened to as it
happened.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

from .chunk import FRAME_MS, AudioChunk
from .io import AudioSink

#: How far a paced sink lets the player run ahead of the clock, s (a device's buffer).
DEVICE_AHEAD_SECONDS = 0.04


class ReplayClock:
    """Seconds since the session began; starts at its first use."""

    def __init__(self) -> None:
        self._start: float | None = None

    def elapsed(self) -> float:
        """Seconds since the first call to any method."""
        now = time.monotonic()
        if self._start is None:
            self._start = now
        return now - self._start

    def wait_until(self, seconds: float) -> None:
        """Sleep until ``seconds`` after the start (at once if that has passed)."""
        delay = seconds - self.elapsed()
        if delay > 0:
            time.sleep(delay)


def paced(source: Iterable[AudioChunk], clock: ReplayClock) -> Iterator[AudioChunk]:
    """The source's audio in 10 ms frames, each handed over once it would have been heard."""
    for chunk in source:
        frame_bytes = chunk.bytes_per_frame * max(1, chunk.rate_hz * FRAME_MS // 1000)
        for offset in range(0, len(chunk.samples), frame_bytes):
            data = chunk.samples[offset : offset + frame_bytes]
            start = chunk.timestamp_seconds + offset / chunk.bytes_per_frame / chunk.rate_hz
            frame = AudioChunk(chunk.rate_hz, chunk.width_bytes, chunk.channels, data, start)
            clock.wait_until(frame.end_seconds)
            yield frame


class PacedSink:
    """Plays into ``inner`` at the pace of a sound card, with silence where nothing played."""

    def __init__(
        self,
        inner: AudioSink,
        clock: ReplayClock,
        rate_hz: int,
        ahead_seconds: float = DEVICE_AHEAD_SECONDS,
    ) -> None:
        self._inner = inner
        self._clock = clock
        self._ahead_seconds = ahead_seconds
        #: The rate the silence is written at until audio says otherwise.
        self._rate_hz = rate_hz
        #: Seconds of audio written so far, silence included: the output's timeline.
        self.written_seconds = 0.0

    def write(self, chunk: AudioChunk) -> None:
        """Fill the time since the last write with silence, write, then wait as a device would."""
        self._rate_hz = chunk.rate_hz
        self._fill_to(self._clock.elapsed(), chunk)
        self._inner.write(chunk)
        self.written_seconds += chunk.seconds
        self._clock.wait_until(self.written_seconds - self._ahead_seconds)

    def flush(self) -> int:
        """Drop what the inner sink holds, when it can (a stop)."""
        flush = getattr(self._inner, "flush", None)
        return int(flush()) if callable(flush) else 0

    def close(self) -> None:
        """Fill with silence up to now (the end of the session), then close the inner sink."""
        self._fill_to(self._clock.elapsed(), AudioChunk(self._rate_hz, 2, 1, b""))
        self._inner.close()

    def _fill_to(self, seconds: float, like: AudioChunk) -> None:
        frames = round((seconds - self.written_seconds) * like.rate_hz)
        if frames > 0:
            silence = bytes(frames * like.bytes_per_frame)
            self._inner.write(
                AudioChunk(like.rate_hz, like.width_bytes, like.channels, silence, 0.0)
            )
            self.written_seconds += frames / like.rate_hz
