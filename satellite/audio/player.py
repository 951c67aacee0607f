"""The playback thread: a jitter buffer between synthesis and the output.

A producer (the TTS thread) calls ``begin()``, ``write()`` for each chunk as it is
synthesised, and ``end()``; or ``play(chunks)`` for all three. Chunks of any format are
converted to the player's rate (16-bit mono) and cut into ``period_ms`` pieces. The
player thread waits until ``prebuffer_ms`` of a reply is buffered (or the reply has
ended), writes ``lead_in_ms`` of silence so the first syllable is not clipped while the
output wakes up, then feeds the sink. If synthesis falls behind, the buffer runs dry:
that is counted in ``underruns`` and the player gathers ``prebuffer_ms`` again rather
than stutter. ALSA xruns are recovered by the ALSA sink and counted there (``xruns``).

``volume`` (0-1) scales what the player thread hands to the sink, so a change is heard
within the buffered audio, not after it.

``stop()`` drops everything buffered, flushes the sink's own queue when it has
``flush()`` (the ALSA sink does), and waits for the player thread to acknowledge; at
most one period is written after that, so with the ALSA ring buffer (4 x 10 ms) well
under 100 ms of audio still plays. ``write()`` then returns False so the producer stops
synthesising. Every begun reply ends with exactly one ``PlaybackFinished`` or
``PlaybackStopped`` event, after its ``PlaybackStarted`` when it made a sound.

The producer's conversion is :class:`~satellite.audio.periods.PeriodCutter`; what the
player thread does with a reply (sink writes, position, events) is
:class:`~satellite.audio.playout.Playout`. The jitter buffer and its lock stay here.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import AudioDeviceError
from ..event_base import Event
from .chunk import AudioChunk
from .io import AudioSink
from .periods import PeriodCutter
from .playout import Playout
from .settings import PlayerSettings

_LOGGER = logging.getLogger(__name__)
#: How long ``stop()`` waits for the player thread to acknowledge, s.
STOP_WAIT_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class _Begin:
    reply_id: str


@dataclass(frozen=True, slots=True)
class _End:
    pass


class _Stop:
    pass


_Item = bytes | _Begin | _End


def _buffer_sizes(settings: PlayerSettings) -> tuple[int, int, int]:
    """Bytes of 16-bit mono at ``rate_hz``: (a period, the most buffered, the prebuffer)."""
    rate_hz = settings.rate_hz
    period = max(1, rate_hz * settings.period_ms // 1000) * 2
    most = max(period, rate_hz * settings.max_buffer_ms // 1000 * 2)
    return period, most, min(rate_hz * settings.prebuffer_ms // 1000 * 2, most - period)


class Player:
    """Plays replies on ``sink`` from its own thread; see the module docstring."""

    def __init__(
        self,
        sink: AudioSink,
        settings: PlayerSettings | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.settings = settings or PlayerSettings()
        self.rate_hz = self.settings.rate_hz
        self._sink = sink
        self._period_bytes, self._max_bytes, self._prebuffer_bytes = _buffer_sizes(self.settings)
        self._cond = threading.Condition()
        self._items: deque[_Item] = deque()
        self._buffered_bytes = 0
        self._ends_queued = 0
        self._generation = 0
        self._dropped_replies: list[str] = []
        self._stop_requested = False
        self._closing = False
        self._busy = False
        self._error: Exception | None = None
        # producer side
        self._writing_generation = -1
        self._cutter = PeriodCutter(self.rate_hz, self._period_bytes)
        # player-thread side
        self._playout = Playout(sink, self.rate_hz, self.settings.lead_in_ms, on_event)
        self._buffering = True
        #: Loudness of what plays from now on, 0-1 (audio already at the device is not changed).
        self.volume = 1.0
        self.underruns = 0
        self.max_buffered_seconds = 0.0
        self._thread = threading.Thread(target=self._run, name="player", daemon=True)
        self._thread.start()

    # --- producer API -------------------------------------------------------------------

    def begin(self, reply_id: str = "") -> None:
        """Start a reply; it plays after any reply already queued."""
        with self._cond:
            self._writing_generation = self._generation
            self._items.append(_Begin(reply_id))
            self._cond.notify_all()
        self._error = None
        self._cutter.reset()

    def write(self, chunk: AudioChunk) -> bool:
        """Queue audio of the current reply (blocks while the buffer is full).

        Returns False once the reply was stopped: stop synthesising then.
        """
        self._raise_if_failed()
        queued = all(self._put(period) for period in self._cutter.periods(chunk))
        self._raise_if_failed()  # the device may have failed while this was queued
        return queued and self._writing_generation == self._generation

    def _raise_if_failed(self) -> None:
        """``AudioDeviceError`` if the output failed since this reply began."""
        if self._error is not None:
            raise AudioDeviceError(f"Playback failed: {self._error}")

    def end(self) -> None:
        """No more audio for the current reply: play out what is buffered."""
        tail = self._cutter.tail()
        if tail:
            self._put(tail)
        with self._cond:
            if self._writing_generation == self._generation:
                self._items.append(_End())
                self._ends_queued += 1
                self._cond.notify_all()
            self._writing_generation = -1

    def play(self, chunks: Iterable[AudioChunk], reply_id: str = "") -> bool:
        """Queue a whole reply; returns False if it was stopped (the iterator is closed)."""
        self.begin(reply_id)
        generation = self._writing_generation
        iterator = iter(chunks)
        try:
            for chunk in iterator:
                if not self.write(chunk):
                    break
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
            complete = generation == self._generation
            self.end()
        return complete

    # --- control --------------------------------------------------------------------------

    def stop(self) -> bool:
        """Drop all queued audio at once; True if anything was playing or queued."""
        with self._cond:
            active = self._busy or self._playout.reply is not None or bool(self._items)
            self._generation += 1
            for item in self._items:
                if isinstance(item, _Begin):
                    self._dropped_replies.append(item.reply_id)
            self._items.clear()
            self._buffered_bytes = 0
            self._ends_queued = 0
            self._stop_requested = active
            self._cond.notify_all()
        flush = getattr(self._sink, "flush", None)
        if callable(flush):
            flush()
        with self._cond:
            self._cond.wait_for(lambda: not self._stop_requested, timeout=STOP_WAIT_SECONDS)
        return active

    def wait(self, timeout: float | None = None) -> bool:
        """Block until everything queued has gone to the sink; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._items and not self._busy, timeout)

    @property
    def playing(self) -> bool:
        """True while a reply is queued or being played."""
        with self._cond:
            return bool(self._items) or self._busy

    @property
    def buffered_seconds(self) -> float:
        """Audio waiting in the jitter buffer, s."""
        return self._buffered_bytes / 2 / self.rate_hz

    @property
    def position_seconds(self) -> float:
        """Audio written to the sink so far, s."""
        return self._playout.position_seconds

    @property
    def xruns(self) -> int:
        """Underruns the output device recovered from (0 for sinks that do not count)."""
        return int(getattr(self._sink, "xruns", 0))

    def close(self) -> None:
        """Play out what is queued, end the thread and close the sink."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout=60.0)
        self._sink.close()

    # --- producer internals --------------------------------------------------------

    def _put(self, data: bytes) -> bool:
        with self._cond:
            self._cond.wait_for(
                lambda: (
                    self._buffered_bytes + len(data) <= self._max_bytes
                    or self._writing_generation != self._generation
                    or self._closing
                )
            )
            if self._writing_generation != self._generation:
                return False
            self._items.append(data)
            self._buffered_bytes += len(data)
            self.max_buffered_seconds = max(self.max_buffered_seconds, self.buffered_seconds)
            self._cond.notify_all()
            return True

    # --- player thread -------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                item = self._next_item()
            if item is None:
                return
            try:
                self._handle(item)
            except Exception as err:  # thread boundary: report, go on
                _LOGGER.exception("Playback failed; dropping the rest of the reply")
                self._error = err
                with self._cond:
                    self._generation += 1
                    self._items.clear()
                    self._buffered_bytes = 0
                    self._ends_queued = 0
                self._finish_reply(stopped="error")
            with self._cond:
                self._busy = self._playout.reply is not None
                self._cond.notify_all()

    def _next_item(self) -> _Item | _Stop | None:
        """Under the lock: wait for the next item to handle (None: closing)."""
        while True:
            if self._stop_requested:
                return _Stop()
            if self._items:
                head = self._items[0]
                if isinstance(head, bytes) and self._buffering:
                    if (
                        self._buffered_bytes < self._prebuffer_bytes
                        and not self._ends_queued
                        and not self._closing
                    ):
                        self._cond.wait()
                        continue
                    self._buffering = False
                item = self._items.popleft()
                if isinstance(item, bytes):
                    self._buffered_bytes -= len(item)
                elif isinstance(item, _End):
                    self._ends_queued -= 1
                self._busy = True
                self._cond.notify_all()
                return item
            if self._closing:
                return None
            if self._playout.reply is not None and self._playout.started and not self._buffering:
                self.underruns += 1
                self._buffering = True
                _LOGGER.debug("Playback buffer ran dry (%d so far)", self.underruns)
            self._busy = self._playout.reply is not None
            self._cond.notify_all()
            self._cond.wait()

    def _handle(self, item: _Item | _Stop) -> None:
        if isinstance(item, _Begin):
            self._playout.begin(item.reply_id)
            self._buffering = True
        elif isinstance(item, _End):
            self._finish_reply(stopped=None)
        elif isinstance(item, _Stop):
            self._finish_reply(stopped="stop")
        else:
            self._playout.play(item, self.volume)

    def _finish_reply(self, stopped: str | None) -> None:
        with self._cond:
            dropped, self._dropped_replies = self._dropped_replies, []
            was_stop_request = self._stop_requested
        self._playout.finish(stopped, dropped)
        self._buffering = True
        if was_stop_request:
            with self._cond:
                self._stop_requested = False
                self._cond.notify_all()
