"""Replaying a recording as a live session: a paced source and a paced, gap-filling sink.

``paced(source, clock)`` hands the pipeline 10 ms frames no faster than a microphone
would, on one monotonic clock: each once its last sample would have been heard. While
the loop is idle it may take several frames at one wake-up (``frames_per_wake``: up to
the wake word model's next decision, so nothing is heard later); it then sleeps until
the last of them is due, and a ``nudge`` (a command for the loop) ends the sleep early.
``PacedSink`` stands in for a sound card in front of a
file: it takes audio no faster than it would play (at most ``ahead_seconds`` ahead of the
clock, as a device's buffer would) and writes silence for the time nothing played, so the
output lines up with the input sample for sample and a session can be listened to as it
happened.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator

from .chunk import FRAME_MS, AudioChunk, join_frames
from .io import AudioSink

#: How far a paced sink lets the player run ahead of the clock, s (a device's buffer).
DEVICE_AHEAD_SECONDS = 0.04
#: How much a frame's end may differ from a sum of frame lengths by rounding, s.
_EPSILON_SECONDS = 1e-6


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

    def wait_until(self, seconds: float, nudge: threading.Event | None = None) -> None:
        """Sleep until ``seconds`` after the start (at once if that has passed), or until
        ``nudge`` is set (it is cleared then)."""
        delay = seconds - self.elapsed()
        if delay <= 0:
            return
        if nudge is None:
            time.sleep(delay)
        elif nudge.wait(delay):
            nudge.clear()


def frames_of(source: Iterable[AudioChunk]) -> Iterator[AudioChunk]:
    """The source's audio cut into 10 ms frames (read from the source as they are needed)."""
    for chunk in source:
        frame_bytes = chunk.bytes_per_frame * max(1, chunk.rate_hz * FRAME_MS // 1000)
        for offset in range(0, len(chunk.samples), frame_bytes):
            data = chunk.samples[offset : offset + frame_bytes]
            start = chunk.timestamp_seconds + offset / chunk.bytes_per_frame / chunk.rate_hz
            yield AudioChunk(chunk.rate_hz, chunk.width_bytes, chunk.channels, data, start)


def paced(
    source: Iterable[AudioChunk],
    clock: ReplayClock,
    frames_per_wake: Callable[[], int] | None = None,
    nudge: threading.Event | None = None,
) -> Iterator[AudioChunk]:
    """The source's audio, each 10 ms frame handed over once it would have been heard.

    Frames go one by one, or as many at once (one chunk) as ``frames_per_wake`` allows,
    asked before each wait. The wait for them comes before reading them, so a live
    stream is read once per wake-up; ``nudge`` ends it early, and the frames heard by
    then go (at least one: the loop never gets audio before it was heard).
    """
    frames = frames_of(source)
    next_end: float | None = None  # when the next frame will have been heard
    want, frame_seconds = 1, FRAME_MS / 1000
    while True:
        if next_end is not None:
            want = max(1, frames_per_wake()) if frames_per_wake is not None else 1
            clock.wait_until(next_end + (want - 1) * frame_seconds, nudge)
        frame = next(frames, None)
        if frame is None:
            return
        clock.wait_until(frame.end_seconds)  # the first frame starts the clock
        batch = [frame]
        frame_seconds = frame.seconds
        while len(batch) < want and (
            batch[-1].end_seconds + frame_seconds <= clock.elapsed() + _EPSILON_SECONDS
        ):
            more = next(frames, None)
            if more is None:
                break
            batch.append(more)
        next_end = batch[-1].end_seconds + frame_seconds
        yield batch[0] if len(batch) == 1 else join_frames(batch)


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
