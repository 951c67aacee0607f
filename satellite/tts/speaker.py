"""The TTS thread: text in, pieces synthesised one after another, chunks to the player.

``Speaker.say()`` takes a whole reply or an iterable of text chunks (an LLM's tokens)
and returns at once with a ``Reply`` handle; the TTS thread cuts the text with
``TextSplitter``, synthesises each piece as soon as it is complete and writes every
chunk to the player as it comes, without the quiet the synthesis begins with
(satellite/tts/leading_quiet.py). ``stop()`` drops queued replies, stops the player and
cancels the synthesis in progress between two chunks. ``on_finished`` (if given) is
called with every reply once the speaker is done with it (spoken, stopped, dropped or
refused), from whichever thread finished it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ..audio.chunk import AudioChunk
from ..audio.player import Player
from ..errors import SatelliteError
from ..queues import drain
from .base import TtsEngine, TtsError
from .leading_quiet import LeadingQuiet
from .text import SplitterSettings, TextSplitter

_LOGGER = logging.getLogger(__name__)
#: Replies waiting for the TTS thread beyond this are refused (the caller never blocks).
MAX_QUEUED_REPLIES = 16


@dataclass(eq=False)
class Reply:
    """A reply handed to the speaker; ``wait()`` until it is synthesised and queued."""

    reply_id: str
    text: str | Iterable[str] | None = None
    sound: AudioChunk | None = None
    generation: int = 0
    pieces: list[str] = field(default_factory=list)
    error: Exception | None = None
    cancelled: bool = False
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every chunk went to the player (or it was stopped); raise its error.

        Returns False on timeout.
        """
        if not self._done.wait(timeout):
            return False
        if self.error is not None:
            raise self.error
        return True

    def finish(self) -> None:
        """Mark the reply as handled (the speaker calls it)."""
        self._done.set()

    @property
    def done(self) -> bool:
        """True once the TTS thread is finished with this reply."""
        return self._done.is_set()


class Speaker:
    """Owns the TTS thread between the dialogue and the player."""

    def __init__(
        self,
        engine: TtsEngine,
        player: Player,
        voice: str | None = None,
        splitter: SplitterSettings | None = None,
        on_finished: Callable[[Reply], None] | None = None,
    ) -> None:
        self.engine = engine
        self.player = player
        self.voice = voice
        self._splitter = splitter
        self._on_finished = on_finished
        self._inbox: queue.Queue[Reply | None] = queue.Queue(MAX_QUEUED_REPLIES)
        self._lock = threading.Lock()
        self._generation = 0
        self._counter = 0
        self._thread = threading.Thread(target=self._run, name="tts", daemon=True)
        self._thread.start()

    def say(self, text: str | Iterable[str], reply_id: str | None = None) -> Reply:
        """Queue a reply: a string, or text chunks as they arrive (iterated on the TTS thread)."""
        return self._queue(Reply(self._next_id(reply_id), text=text))

    def play_sound(self, sound: AudioChunk, reply_id: str | None = None) -> Reply:
        """Queue a sound (a feedback chime) in order with the speech."""
        return self._queue(Reply(self._next_id(reply_id), sound=sound))

    def stop(self) -> bool:
        """Stop speaking now: drop queued replies, flush the player, cancel synthesis."""
        with self._lock:
            self._generation += 1
            items = drain(self._inbox)
            for _ in items:
                self._inbox.task_done()
            dropped = [item for item in items if item is not None]
            if None in items:  # close() asked the thread to end: keep that request
                self._inbox.put(None)
        for reply in dropped:
            reply.cancelled = True
            self._finish(reply)
        return self.player.stop() or bool(dropped)

    def idle(self) -> bool:
        """True when no reply is waiting or being synthesised (the player may still play)."""
        return self._inbox.unfinished_tasks == 0

    def close(self) -> None:
        """Finish queued replies, then end the TTS thread (the player is the caller's)."""
        self._inbox.put(None)
        self._thread.join(timeout=60.0)

    # --- the TTS thread ------------------------------------------------------------------

    def _next_id(self, reply_id: str | None) -> str:
        with self._lock:
            self._counter += 1
            return reply_id if reply_id is not None else f"r{self._counter}"

    def _queue(self, reply: Reply) -> Reply:
        with self._lock:
            reply.generation = self._generation
            try:
                self._inbox.put_nowait(reply)
            except queue.Full:
                _LOGGER.warning(
                    "Reply %s refused: %d replies are waiting", reply.reply_id, MAX_QUEUED_REPLIES
                )
                reply.error = TtsError(
                    f"{MAX_QUEUED_REPLIES} replies are already waiting to "
                    "be spoken; try again when they are done"
                )
                refused = True
            else:
                refused = False
        if refused:
            self._finish(reply)
        return reply

    def _finish(self, reply: Reply) -> None:
        reply.finish()
        if self._on_finished is not None:
            try:
                self._on_finished(reply)
            except Exception:  # a listener's bug must not stop the speaker
                _LOGGER.exception("Listener of reply %s failed", reply.reply_id)

    def _run(self) -> None:
        while True:
            reply = self._inbox.get()
            if reply is None:
                self._inbox.task_done()
                return
            try:
                self._speak(reply)
            except SatelliteError as err:
                _LOGGER.warning("Reply %s not spoken: %s", reply.reply_id, err)
                reply.error = err
            except Exception as err:  # thread boundary: hand it to the caller
                _LOGGER.exception("Speaking reply %s failed", reply.reply_id)
                reply.error = err
            finally:
                self._finish(reply)
                self._inbox.task_done()

    def _speak(self, reply: Reply) -> None:
        with self._lock:
            if reply.generation != self._generation:
                reply.cancelled = True
                return
            self.player.begin(reply.reply_id)
        try:
            if reply.sound is not None:
                reply.cancelled = not self.player.write(reply.sound)
                return
            start = LeadingQuiet()
            for piece in self._pieces(reply):
                reply.pieces.append(piece)
                if not self._synthesize(piece, start):
                    reply.cancelled = True
                    return
        finally:
            self.player.end()

    def _pieces(self, reply: Reply) -> Iterator[str]:
        text = reply.text if reply.text is not None else ""
        splitter = TextSplitter(self._splitter)
        for chunk in [text] if isinstance(text, str) else text:
            yield from splitter.feed(chunk)
            if reply.generation != self._generation:
                return
        yield from splitter.finish()

    def _synthesize(self, piece: str, start: LeadingQuiet) -> bool:
        """Synthesise ``piece`` into the player, without the reply's leading quiet."""
        chunks = self.engine.synthesize(piece, self.voice)
        try:
            for chunk in chunks:
                heard = start.cut(chunk)
                if heard is not None and not self.player.write(heard):
                    return False
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        return True
