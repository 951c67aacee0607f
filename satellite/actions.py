"""Actions: instructions inside the process, as opposed to events, which are facts.

Events (``satellite.events`` and the packages' ``events`` modules) say what happened;
they are what the MQTT link publishes. Actions say what the satellite is to do next:
answer an utterance, speak, ask Home Assistant, stop or change the volume. The pipeline
hands its actions to the app through ``Pipeline.take_actions``, the dialogue returns them
to the app, and the app carries them out; the link never sees one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .nlu.recognizer import IntentResult


@dataclass(frozen=True)
class Action:
    """Something to do, decided at ``timestamp_seconds`` (the microphone's clock)."""

    timestamp_seconds: float


@dataclass(frozen=True)
class AnswerDue(Action):
    """An utterance was understood (or not) and is owed an answer by the dialogue.

    ``doubtful``: heard in a loud room, so the dialogue asks once more before acting (a
    result with no intent: not made out in a noisy room, so it asks for it again)."""

    utterance_id: str
    result: IntentResult
    doubtful: bool = False


@dataclass(frozen=True)
class ReplyRequested(Action):
    """Say ``text`` (about ``utterance_id``)."""

    utterance_id: str
    text: str


@dataclass(frozen=True)
class HaIntentRequested(Action):
    """Home Assistant is to carry out ``intent``; its spoken answer comes as a response."""

    utterance_id: str
    intent: str
    slots: dict[str, Any]


@dataclass(frozen=True)
class PlaybackControl(Action):
    """Stop speaking (``action`` ``stop``), or set the volume (``volume``, 0-100)."""

    action: str
    volume: int


@dataclass(frozen=True)
class ListenAgain(Action):
    """The satellite asked the person something (about ``utterance_id``): once it has
    said so, listen for the answer without a wake word."""

    utterance_id: str


@dataclass(frozen=True)
class BargeIn(Action):
    """The wake word was heard while the satellite was speaking: stop speech, listen."""

    wake_word: str


@dataclass(frozen=True)
class StopSaid(Action):
    """A stop word was heard over the satellite's own voice: stop speaking, as the
    ``stop`` control does (no wake word: nothing is listened for after it)."""

    word: str


@dataclass(frozen=True)
class ReplyPaused(Action):
    """Someone spoke over the satellite's reply (echo cancellation and hearing while
    speaking on): stop playing it now and listen; what they said is heard as an
    utterance. ``onset_seconds``: where their speech began (the microphone's clock)."""

    onset_seconds: float


@dataclass(frozen=True)
class ReplyResumed(Action):
    """What was said over the paused reply came to nothing (no speech heard, or nothing
    understood): say the paused reply again. Anything understood answers instead."""
