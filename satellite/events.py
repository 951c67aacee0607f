"""Typed events that leave the frame loop (their base is ``satellite.event_base``).

Every event is a frozen dataclass with a ``type`` name, ``to_dict`` and ``from_dict``;
these dictionaries are the JSON that the CLI prints and MQTT carries. Fields whose
metadata says ``serialize=False`` (audio) stay on the device and are not part of the dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .audio.chunk import AudioChunk
from .event_base import (
    Event,
    EventDecodeError,
    event_classes,
    event_from_dict,
    fields_from_dict,
    fields_to_dict,
)

__all__ = [
    "Event",
    "EventDecodeError",
    "ListeningTimeout",
    "SpeechStarted",
    "StageError",
    "StateChanged",
    "UtteranceEnded",
    "WakeDetected",
    "event_classes",
    "event_from_dict",
    "fields_from_dict",
    "fields_to_dict",
]


def _audio_field() -> Any:
    return field(default=None, repr=False, compare=False, metadata={"serialize": False})


@dataclass(frozen=True)
class WakeDetected(Event):
    """A wake word was heard; the timestamp is when the detector fired."""

    type_name: ClassVar[str] = "wake_detected"

    wake_word: str
    model: str
    probability: float


@dataclass(frozen=True)
class StateChanged(Event):
    """The satellite moved to another state (idle, listening, ...)."""

    type_name: ClassVar[str] = "state_changed"

    state: str
    previous: str


@dataclass(frozen=True)
class SpeechStarted(Event):
    """Speech began after the wake word; the timestamp is the estimated onset."""

    type_name: ClassVar[str] = "speech_started"

    utterance_id: str


@dataclass(frozen=True)
class UtteranceEnded(Event):
    """A complete utterance, from speech onset to the end of speech.

    ``timestamp_seconds`` is when the end was decided (after the trailing silence).
    ``audio`` (not serialised) starts at ``audio_start_seconds``, which includes the
    pre-roll before ``start_seconds``.
    """

    type_name: ClassVar[str] = "utterance_ended"

    utterance_id: str
    start_seconds: float
    end_seconds: float
    audio_start_seconds: float
    reason: str
    audio: AudioChunk | None = _audio_field()

    @property
    def duration_seconds(self) -> float:
        """Speech duration from onset to end."""
        return self.end_seconds - self.start_seconds


@dataclass(frozen=True)
class ListeningTimeout(Event):
    """A wake word was heard but no speech followed in time."""

    type_name: ClassVar[str] = "listening_timeout"

    utterance_id: str


@dataclass(frozen=True)
class StageError(Event):
    """A stage raised an exception; it was reset and listening went on."""

    type_name: ClassVar[str] = "stage_error"

    stage: str
    error: str
    message: str


@dataclass(frozen=True)
class EnrolmentChanged(Event):
    """Enrolment by voice (satellite/enrol/prompted.py) moved on: ``state`` is
    ``prompting`` (``sentence``, prompt ``prompt`` of ``prompts``, asked again when
    ``again``), ``adapting``, ``done``, ``failed`` (``error`` says why and what to do) or
    ``cancelled``; ``kept``: the takes kept so far."""

    type_name: ClassVar[str] = "enrolment"

    speaker: str
    state: str
    prompt: int
    prompts: int
    kept: int
    sentence: str = ""
    again: bool = False
    error: str = ""
