"""The quiet a reply's synthesis begins with, cut before it reaches the player.

Synthesizers start an utterance with dead air: eSpeak NG writes 40-55 ms of exact
zeros before a first plosive ("Turned on ...", "Today is ..."), the closure of a stop
that is inaudible at the start of an utterance. Played as it comes, it only delays the
first thing heard. The player's own lead-in (``player.lead_in_ms``, for an output that
wakes up) is kept; this is the synthesizer's silence, not the output's.

Only a reply's first audio is trimmed (pauses between its sentences are speech), at
most ``MOST_SECONDS`` of it, keeping ``KEEP_SECONDS`` before the first sound so its
onset is whole. Audio other than 16-bit passes unchanged.
"""

from __future__ import annotations

import numpy as np

from ..audio.chunk import AudioChunk

#: Samples at or below this (16-bit, about -66 dBFS) are quiet.
QUIET_LEVEL = 16
#: Quiet kept before the first sound, s.
KEEP_SECONDS = 0.005
#: The most quiet dropped from the start of a reply, s.
MOST_SECONDS = 0.25


class LeadingQuiet:
    """Drops the quiet at the start of one reply's audio; one per reply."""

    def __init__(self) -> None:
        #: Quiet dropped so far, s.
        self.dropped_seconds = 0.0
        self._done = False

    def cut(self, chunk: AudioChunk) -> AudioChunk | None:
        """``chunk`` without the reply's leading quiet (None: all of it was quiet)."""
        if self._done:
            return chunk
        if chunk.width_bytes != 2 or self.dropped_seconds >= MOST_SECONDS:
            self._done = True
            return chunk
        frame = chunk.bytes_per_frame
        samples = np.frombuffer(chunk.samples, dtype="<i2")
        loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > QUIET_LEVEL)
        room = round((MOST_SECONDS - self.dropped_seconds) * chunk.rate_hz)
        if not len(loud):
            frames = len(chunk.samples) // frame
            if frames > room:  # quiet longer than we drop: the rest plays
                self._done = True
                return self._from(chunk, room)
            self.dropped_seconds += frames / chunk.rate_hz
            return None
        self._done = True
        first = int(loud[0]) // chunk.channels
        keep = round(KEEP_SECONDS * chunk.rate_hz)
        return self._from(chunk, min(room, max(0, first - keep)))

    def _from(self, chunk: AudioChunk, frames: int) -> AudioChunk:
        """``chunk`` from sample frame ``frames`` on; the frames dropped are counted."""
        self.dropped_seconds += frames / chunk.rate_hz
        return AudioChunk(
            chunk.rate_hz,
            chunk.width_bytes,
            chunk.channels,
            chunk.samples[frames * chunk.bytes_per_frame :],
            chunk.timestamp_seconds + frames / chunk.rate_hz,
        )
