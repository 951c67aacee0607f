"""The frame loop while the satellite speaks: its own voice out, and who speaks over it.

While a reply plays the microphone hears the satellite's own voice. ``WhileSpeaking``
holds whether it speaks (the app tells the loop: ``Pipeline.set_speaking``), takes the
speaker's echo out of each frame (``frontend.echo``, first in the loop: the canceller
needs the microphone as it was heard), and turns what is heard over a reply into
actions: a stop word (``StopSaid``, ``frontend.echo.hear_while_speaking``) and the wake
word (``BargeIn``).
"""

from __future__ import annotations

import logging

from .actions import Action, BargeIn, StopSaid
from .audio.chunk import AudioChunk
from .events import Event
from .frontend.base import WakeHit
from .stages import Stages
from .stt.keywords import StopHeard
from .supervisor import Supervisor

_LOGGER = logging.getLogger(__name__)


class WhileSpeaking:
    """Whether the satellite speaks, and what the loop does about it frame by frame."""

    def __init__(self, stages: Stages, supervisor: Supervisor) -> None:
        self.stages = stages
        self.supervisor = supervisor
        #: True while the satellite's own voice is playing.
        self.speaking = False

    def cancel_echo(
        self, frame: AudioChunk, events: list[Event], actions: list[Action]
    ) -> AudioChunk:
        """The microphone with the speaker's echo taken out; while speaking, a stop word
        heard in what is left adds a ``StopSaid`` to ``actions``."""
        stages, supervisor = self.stages, self.supervisor
        echo, spotter = stages.echo, stages.stop_words
        if echo is None:
            return frame
        failures = supervisor.errors_by_stage.get(echo.name, 0)
        cancelled = supervisor.guard(echo, echo.process, frame, frame, events)
        if spotter is None:
            return cancelled
        if supervisor.errors_by_stage.get(echo.name, 0) != failures:
            spotter.reset()  # the canceller starts again: what the gate knew of it is gone
        playing = self.speaking and echo.cancelling
        nothing: StopHeard | None = None
        heard = lambda f: spotter.hear(frame, f, playing)  # noqa: E731
        said = supervisor.guard(spotter, heard, cancelled, nothing, events)
        if said is not None:
            _LOGGER.info(
                "Heard %r over the reply (%.1f dB over its echo)", said.word, said.margin_db
            )
            actions.append(StopSaid(said.timestamp_seconds, word=said.word))
        return cancelled

    def barge_in(self, hit: WakeHit, actions: list[Action]) -> None:
        """The wake word heard: if over a reply, a ``BargeIn`` (the player stops) and the
        loop listens as if the satellite had stopped speaking."""
        if self.speaking:
            self.speaking = False
            actions.append(BargeIn(round(hit.timestamp_seconds, 3), wake_word=hit.wake_word))

    def reset(self) -> None:
        self.speaking = False
