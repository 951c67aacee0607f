"""Events of understanding and dialogue (they register with satellite.events)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..events import Event

if TYPE_CHECKING:
    from .recognizer import IntentResult


@dataclass(frozen=True)
class Transcript(Event):
    """What the speech recognizer heard (published only when privacy allows)."""

    type_name: ClassVar[str] = "transcript"

    utterance_id: str
    text: str
    confidence: float
    in_grammar: bool


@dataclass(frozen=True)
class IntentRecognized(Event):
    """An utterance was understood (``intent`` set) or not (``intent`` None)."""

    type_name: ClassVar[str] = "intent"

    utterance_id: str
    intent: str | None
    slots: dict[str, Any]
    confidence: float
    source: str
    text: str


@dataclass(frozen=True)
class HelpRequested(Event):
    """Someone asked for help: a caregiver must be alerted."""

    type_name: ClassVar[str] = "help_requested"

    utterance_id: str
    text: str
    severity: str


def intent_event(result: IntentResult, utterance_id: str, at_seconds: float) -> IntentRecognized:
    """The ``intent`` event of ``result``, heard in ``utterance_id``."""
    return IntentRecognized(
        timestamp_seconds=at_seconds,
        utterance_id=utterance_id,
        intent=result.intent,
        slots=dict(result.slots),
        confidence=result.confidence,
        source=result.source,
        text=result.text,
    )
