"""The satellite's one way out: the TTS speaker and the player, seen from the frame loop.

Everything the satellite says (dialogue replies, Home Assistant's answers, ``say``) goes
through one :class:`~satellite.tts.speaker.Speaker` and one
:class:`~satellite.audio.player.Player`; the player converts every engine's audio to the
output's rate, buffers it and stops it. Their threads report here through one queue, and
the frame loop drains it with :meth:`VoiceOut.poll`, which tells it:

- when the satellite starts and stops speaking (:class:`Speaking`, in order, so a reply
  that began and ended between two polls is still seen),
- how each reply that was asked for with a request id ended (:class:`RequestDone`: the
  reply played to its end, was stopped, or failed), once both the TTS thread and the
  player are finished with it,
- that the output failed (:class:`OutputFailed`), so the app can say it cannot speak.

Feedback sounds (:meth:`VoiceOut.play_sound`) play in order with speech but are not
speaking: they bring no :class:`Speaking` notice, so the microphone stays open while they
play (they are tones the VAD does not take for speech).
"""

from __future__ import annotations

import logging
import queue
from dataclasses import dataclass

from .audio.chunk import AudioChunk
from .audio.events import PlaybackFinished, PlaybackStarted, PlaybackStopped
from .audio.io import AudioSink
from .audio.player import Player
from .audio.settings import PlayerSettings
from .events import Event, StageError
from .queues import drain
from .tts.base import TtsEngine
from .tts.speaker import Reply, Speaker

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class RequestDone:
    """A reply asked for with ``request_id`` ended: ``done``, ``stopped`` or ``error``."""

    request_id: str
    status: str
    error: str | None = None


@dataclass(frozen=True)
class Speaking:
    """Playback of a reply began (True) or ended (False)."""

    speaking: bool


@dataclass(frozen=True)
class OutputFailed:
    """The output device failed while playing ``reply_id``."""

    reply_id: str
    error: str

    def stage_error(self, at_seconds: float) -> StageError:
        """The error to publish: the satellite cannot speak."""
        return StageError(
            round(at_seconds, 3),
            stage="player",
            error="AudioDeviceError",
            message=f"{self.error}: the satellite cannot speak",
        )


Notice = RequestDone | OutputFailed | Speaking


@dataclass
class _Request:
    request_id: str
    reply: Reply
    #: How playback ended (``done``/``stopped``/``error``); None while it has not.
    played: str | None = None


class VoiceOut:
    """Owns the speaker and the player; the frame loop asks, polls and stops."""

    def __init__(
        self,
        engine: TtsEngine,
        sink: AudioSink,
        settings: PlayerSettings | None = None,
        voice: str | None = None,
    ) -> None:
        self._notices: queue.SimpleQueue[Event | Reply] = queue.SimpleQueue()
        self.player = Player(sink, settings, on_event=self._notices.put)
        self.speaker = Speaker(engine, self.player, voice, on_finished=self._notices.put)
        self.speaking = False
        self._requests: dict[str, _Request] = {}
        #: Replies that are feedback sounds, not speech.
        self._sounds: set[str] = set()

    @property
    def volume(self) -> float:
        """Loudness of what plays from now on, 0-1."""
        return self.player.volume

    @volume.setter
    def volume(self, value: float) -> None:
        self.player.volume = min(1.0, max(0.0, value))

    def say(self, text: str, request_id: str | None = None) -> Reply:
        """Speak ``text`` after what is already queued; report ``request_id`` when it ends."""
        reply = self.speaker.say(text)
        if request_id is not None:
            self._requests[reply.reply_id] = _Request(request_id, reply)
        return reply

    def play_audio(self, audio: AudioChunk, request_id: str) -> Reply:
        """Play ``audio`` as the satellite's speech (an announcement of media): it counts
        as speaking, and ``request_id`` is reported when it ends."""
        reply = self.speaker.play_sound(audio)
        self._requests[reply.reply_id] = _Request(request_id, reply)
        return reply

    def deliver(
        self,
        text: str,
        request_id: str | None = None,
        audio: AudioChunk | None = None,
        chime: AudioChunk | None = None,
    ) -> Reply:
        """``chime`` first if given, then ``audio`` (with a request id) or ``text``."""
        if chime is not None:
            self.play_sound(chime)
        if audio is not None and request_id is not None:
            return self.play_audio(audio, request_id)
        return self.say(text, request_id)

    def play_sound(self, sound: AudioChunk) -> Reply:
        """Play a feedback sound after what is queued; the microphone stays open."""
        reply = self.speaker.play_sound(sound)
        self._sounds.add(reply.reply_id)
        return reply

    def stop(self) -> None:
        """Stop what plays and drop what is queued (requests among them end ``stopped``)."""
        self.speaker.stop()

    def idle(self) -> bool:
        """True when nothing is queued, being synthesised or playing."""
        return self.speaker.idle() and not self.player.playing

    def poll(self) -> list[Notice]:
        """The threads' notices since the last poll, in order (frame loop thread)."""
        out: list[Notice] = []
        for notice in drain(self._notices):
            if isinstance(notice, Reply):
                request = self._requests.get(notice.reply_id)
                if request is not None:
                    self._conclude(request, out)
                elif notice.reply_id in self._sounds and notice.cancelled:
                    self._sounds.discard(notice.reply_id)  # dropped: no playback event
            elif isinstance(notice, PlaybackFinished | PlaybackStopped | PlaybackStarted) and (
                notice.reply_id in self._sounds
            ):
                if not isinstance(notice, PlaybackStarted):
                    self._sounds.discard(notice.reply_id)
            elif isinstance(notice, PlaybackStarted):
                self.speaking = True
                out.append(Speaking(True))
            elif isinstance(notice, PlaybackFinished | PlaybackStopped):
                if self.speaking:
                    self.speaking = False
                    out.append(Speaking(False))
                self._on_played(notice, out)
        return out

    def close(self) -> None:
        """Say what is queued, play it out, end both threads and close the sink."""
        self.speaker.close()
        self.player.close()

    def _on_played(self, event: PlaybackFinished | PlaybackStopped, out: list[Notice]) -> None:
        if isinstance(event, PlaybackStopped) and event.reason == "error":
            out.append(OutputFailed(event.reply_id, "the output device failed"))
        request = self._requests.get(event.reply_id)
        if request is None:
            return
        if isinstance(event, PlaybackFinished):
            request.played = "done"
        else:
            request.played = "error" if event.reason == "error" else "stopped"
        self._conclude(request, out)

    def _conclude(self, request: _Request, out: list[Notice]) -> None:
        """Report the request once the TTS thread is done with it and its end is known."""
        reply = request.reply
        if not reply.done:
            return
        if reply.error is not None:
            done = RequestDone(request.request_id, "error", str(reply.error))
        elif request.played == "error":  # a failed device also cancels the rest of the reply
            done = RequestDone(request.request_id, "error", "the output device failed")
        elif reply.cancelled or request.played == "stopped":
            done = RequestDone(request.request_id, "stopped")
        elif request.played == "done":
            done = RequestDone(request.request_id, "done")
        else:
            return  # synthesised and queued; playback has not ended yet
        del self._requests[reply.reply_id]
        out.append(done)
