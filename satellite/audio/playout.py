"""The player thread's side of a reply: lead-in, volume, sink writes and playback events.

A reply that makes a sound starts with ``PlaybackStarted`` and, when the output has been
quiet for ``LEAD_IN_AFTER_SECONDS`` (an amplifier may have gone to sleep), ``lead_in_ms``
of silence; one that follows on the heels of another (the answer after the ``done``
sound) starts at once. It ends with exactly one ``PlaybackFinished`` or
``PlaybackStopped``, and so does every reply that was dropped before it began to play.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

import numpy as np

from ..event_base import Event
from .chunk import AudioChunk
from .events import PlaybackFinished, PlaybackStarted, PlaybackStopped
from .io import AudioSink

_LOGGER = logging.getLogger(__name__)

#: Output quiet this long gets the lead-in before the next reply, s.
LEAD_IN_AFTER_SECONDS = 1.0


class Playout:
    """Writes the current reply to ``sink`` and reports it; used by the player thread only."""

    def __init__(
        self,
        sink: AudioSink,
        rate_hz: int,
        lead_in_ms: int,
        on_event: Callable[[Event], None] | None,
    ) -> None:
        self.rate_hz = rate_hz
        self.lead_in_ms = lead_in_ms
        self._sink = sink
        self._on_event = on_event
        #: The reply being played (None between replies).
        self.reply: str | None = None
        #: True once the reply made a sound.
        self.started = False
        self._reply_bytes = 0
        #: Audio written to the sink so far, s.
        self.position_seconds = 0.0
        #: When the last reply's audio will have played (monotonic s), None before any.
        self._sounding_until: float | None = None

    def begin(self, reply_id: str) -> None:
        """A new reply starts (nothing is written yet)."""
        self.reply = reply_id
        self.started = False
        self._reply_bytes = 0

    def play(self, data: bytes, volume: float) -> None:
        """Write a period of the reply at ``volume`` (0-1); the first one goes after the
        event and the lead-in."""
        if not self.started:
            self.started = True
            self._emit(PlaybackStarted(self._now(), reply_id=self.reply or ""))
            if self._quiet_for() >= LEAD_IN_AFTER_SECONDS:
                self._write(bytes(self.rate_hz * self.lead_in_ms // 1000 * 2), volume)
        self._write(data, volume)
        self._reply_bytes += len(data)
        self._sounding_until = max(time.monotonic(), self._sounding_until or 0.0)
        self._sounding_until += len(data) / 2 / self.rate_hz

    def _quiet_for(self) -> float:
        """How long the output has been quiet, s (forever before the first reply)."""
        if self._sounding_until is None:
            return float("inf")
        return time.monotonic() - self._sounding_until

    def finish(self, stopped: str | None, dropped: Iterable[str]) -> None:
        """End the reply: finished (``stopped`` None) or stopped for ``stopped``; replies
        in ``dropped`` never played and are reported stopped."""
        played = round(self._reply_bytes / 2 / self.rate_hz, 3)
        if self.reply is not None:
            if stopped is None:
                self._emit(
                    PlaybackFinished(self._now(), reply_id=self.reply, duration_seconds=played)
                )
            else:
                self._emit(
                    PlaybackStopped(
                        self._now(), reply_id=self.reply, played_seconds=played, reason=stopped
                    )
                )
        for reply_id in dropped:
            self._emit(
                PlaybackStopped(self._now(), reply_id=reply_id, played_seconds=0.0, reason="stop")
            )
        self.reply = None
        self.started = False

    def _write(self, data: bytes, volume: float) -> None:
        if data:
            volume = min(1.0, max(0.0, volume))
            if volume < 1.0:
                scaled = np.frombuffer(data, dtype="<i2").astype(np.float32) * volume
                data = scaled.astype("<i2").tobytes()
            self._sink.write(AudioChunk(self.rate_hz, 2, 1, data, self.position_seconds))
            self.position_seconds += len(data) / 2 / self.rate_hz

    def _now(self) -> float:
        return round(self.position_seconds, 3)

    def _emit(self, event: Event) -> None:
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:  # a listener's bug must not stop playback
                _LOGGER.exception("Playback event listener failed on %s", event.type_name)
