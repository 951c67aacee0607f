"""Events of the care signal: a rate per utterance, alerts and their clearing.

They register themselves with :mod:`satellite.events` (MQTT topics ``prosody`` and
``alert``). ``timestamp_seconds`` is when the utterance ended, in seconds from the start
of the input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..events import Event

#: The ``reason`` of an utterance that was not judged.
INSUFFICIENT_SPEECH = "insufficient speech"
#: The kind of every alert this package raises.
RUSHED_SPEECH = "rushed_speech"


@dataclass(frozen=True)
class Prosody(Event):
    """Speech rate of one utterance and how it compares with the speaker's baseline.

    When ``judged`` is false the utterance had too little usable speech: ``reason`` is
    ``"insufficient speech"``, ``detail`` says why, the ratio is null and nothing was
    learnt from it. Rates are syllables per second; ``source`` is the estimator that
    produced them (``acoustic``, ``lexical``, or ``none``).
    """

    type_name: ClassVar[str] = "prosody"

    utterance_id: str
    judged: bool
    source: str
    syllables: float
    #: The rate compared with the baseline (``measure``: articulation by default).
    syllables_per_second: float | None
    speaking_rate: float | None
    articulation_rate: float | None
    speech_seconds: float
    articulation_seconds: float
    baseline: float | None
    baseline_mad: float | None
    baseline_count: int
    ratio: float | None
    start_seconds: float = 0.0
    end_seconds: float = 0.0
    speaker: str | None = None
    reason: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Alert(Event):
    """Rising edge of a rushed-speech alert (or a rise to a higher severity).

    ``severity`` is ``moderate`` (``rushed_count`` of the last ``rushed_window``
    utterances at ``rushed_ratio`` or more) or ``high`` (one at ``high_ratio`` or more).
    ``say`` is the question to ask aloud, when that is configured.
    """

    type_name: ClassVar[str] = "alert"

    utterance_id: str
    kind: str
    severity: str
    ratio: float
    rate: float
    baseline: float
    speaker: str | None = None
    say: str | None = None


@dataclass(frozen=True)
class AlertCleared(Event):
    """The speaker has been calm again for ``clear_count`` utterances in a row."""

    type_name: ClassVar[str] = "alert_cleared"

    utterance_id: str
    kind: str
    ratio: float
    duration_seconds: float
    speaker: str | None = None
