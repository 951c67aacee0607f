"""The satellite's MQTT payloads, parsed strictly (see tests/golden/ for examples).

Home Assistant cannot import the satellite's Python package, so the contract is kept
in step by both sides' tests loading the same golden files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from .const import MAX_PAYLOAD_BYTES

STATES = ("idle", "listening", "processing", "responding", "muted")


class MessageError(ValueError):
    """A payload does not match the contract."""


def load_json(payload: str | bytes | bytearray) -> dict[str, Any]:
    """A JSON object from a payload of at most MAX_PAYLOAD_BYTES."""
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise MessageError(f"payload of {len(payload)} bytes is too large")
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError) as err:
        raise MessageError(f"invalid JSON: {err}") from None
    if not isinstance(data, dict):
        raise MessageError("expected a JSON object")
    return data


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise MessageError(f"{key}: expected a string")
    return value


def _opt_str(data: dict[str, Any], key: str) -> str | None:
    return None if data.get(key) is None else _str(data, key)


def _num(data: dict[str, Any], key: str) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MessageError(f"{key}: expected a number")
    return float(value)


def _int(data: dict[str, Any], key: str) -> int:
    value = _num(data, key)
    if not math.isfinite(value):  # JSON's Infinity and NaN, which int() cannot take
        raise MessageError(f"{key}: expected a finite number")
    return int(value)


def _strs(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MessageError(f"{key}: expected a list of strings")
    return tuple(value)


@dataclass(frozen=True)
class SatelliteInfo:
    """``info``: who the satellite is."""

    id: str
    name: str
    version: str
    language: str
    wake_words: tuple[str, ...]
    voices: tuple[str, ...]
    capabilities: tuple[str, ...]
    protocol: int = 1
    area: str | None = None
    #: What the speech grammar holds (names, areas, built at in Unix seconds); None from
    #: satellites that do not say, or say it in a shape this version does not know.
    grammar: tuple[int, int, float] | None = None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> SatelliteInfo:
        """Check and build."""
        return cls(
            id=_str(data, "id"),
            name=_str(data, "name"),
            version=_str(data, "version"),
            language=_str(data, "language"),
            wake_words=_strs(data, "wake_words"),
            voices=_strs(data, "voices"),
            capabilities=_strs(data, "capabilities"),
            protocol=_int(data, "protocol") if "protocol" in data else 1,
            area=_opt_str(data, "area"),
            grammar=_grammar(data),
        )

    def as_dict(self) -> dict[str, Any]:
        """For the config entry's data."""
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "wake_words": list(self.wake_words),
            "voices": list(self.voices),
            "capabilities": list(self.capabilities),
            "protocol": self.protocol,
            "area": self.area,
            **({} if self.grammar is None else dict(zip(_GRAMMAR_KEYS, self.grammar, strict=True))),
        }


_GRAMMAR_KEYS = ("grammar_names", "grammar_areas", "grammar_built")


def _grammar(data: dict[str, Any]) -> tuple[int, int, float] | None:
    """The optional grammar fields of ``info``, or None (leniently: never an error)."""
    try:
        names, areas = _int(data, "grammar_names"), _int(data, "grammar_areas")
        built = _num(data, "grammar_built")
    except MessageError:
        return None
    return (names, areas, built) if math.isfinite(built) else None


@dataclass(frozen=True)
class IntentMessage:
    """``intent``: what the satellite understood."""

    id: str
    utterance_id: str
    intent: str | None
    slots: dict[str, str]
    confidence: float
    source: str

    @classmethod
    def parse(cls, data: dict[str, Any]) -> IntentMessage:
        """Check and build."""
        slots = data.get("slots")
        if not isinstance(slots, dict) or not all(
            isinstance(k, str) and isinstance(v, str | int | float) for k, v in slots.items()
        ):
            raise MessageError("slots: expected an object of names to values")
        return cls(
            id=_str(data, "id"),
            utterance_id=_str(data, "utterance_id"),
            intent=_opt_str(data, "intent"),
            slots={k: str(v) for k, v in slots.items()},
            confidence=_num(data, "confidence"),
            source=_str(data, "source"),
        )


def _opt_num(data: dict[str, Any], key: str) -> float | None:
    return None if data.get(key) is None else _num(data, key)


@dataclass(frozen=True)
class AlertMessage:
    """``alert``: rushed speech began (or rose in severity); ``time`` is when (Unix s)."""

    id: str
    kind: str
    ratio: float
    severity: str
    utterance_id: str
    time: float

    @classmethod
    def parse(cls, data: dict[str, Any]) -> AlertMessage:
        """Check and build."""
        return cls(
            id=_str(data, "id"),
            kind=_str(data, "kind"),
            ratio=_num(data, "ratio"),
            severity=_str(data, "severity"),
            utterance_id=_str(data, "utterance_id"),
            time=_num(data, "time"),
        )


@dataclass(frozen=True)
class HelpMessage:
    """``help``: someone asked for help; a caregiver must be alerted. ``time`` is when
    it was asked (Unix s), the same when the satellite sends it again."""

    id: str
    utterance_id: str
    severity: str
    time: float

    @classmethod
    def parse(cls, data: dict[str, Any]) -> HelpMessage:
        """Check and build."""
        return cls(
            _str(data, "id"), _str(data, "utterance_id"), _str(data, "severity"), _num(data, "time")
        )


#: Where an open alert was first published -> how its payload is parsed.
ALERT_SOURCES: dict[str, Callable[[dict[str, Any]], HelpMessage | AlertMessage]] = {
    "help": HelpMessage.parse,
    "alert": AlertMessage.parse,
}


@dataclass(frozen=True)
class OpenAlert:
    """One alert of ``alert/active``: the message first published on ``source``."""

    source: str
    message: HelpMessage | AlertMessage
    sent: int


@dataclass(frozen=True)
class ActiveAlerts:
    """``alert/active`` (retained): the alerts the satellite has no ``alert/ack`` for.

    An alert from a source this version does not know is left out (a newer satellite),
    never the whole list."""

    alerts: tuple[OpenAlert, ...]
    notice: str

    @classmethod
    def parse(cls, data: dict[str, Any]) -> ActiveAlerts:
        """Check and build."""
        items = data.get("alerts")
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise MessageError("alerts: expected a list of objects")
        alerts = []
        for item in items:
            parse = ALERT_SOURCES.get(_str(item, "source"))
            if parse is None:
                continue
            payload = item.get("payload")
            if not isinstance(payload, dict):
                raise MessageError("alerts.payload: expected an object")
            message = parse(payload)
            if message.id != _str(item, "id"):
                raise MessageError("alerts.id: differs from its payload's id")
            alerts.append(OpenAlert(item["source"], message, _int(item, "sent")))
        return cls(tuple(alerts), _str(data, "notice"))


@dataclass(frozen=True)
class AlertClearedMessage:
    """``alert/cleared``: the speaker has been calm again."""

    id: str
    kind: str
    duration_seconds: float

    @classmethod
    def parse(cls, data: dict[str, Any]) -> AlertClearedMessage:
        """Check and build."""
        return cls(_str(data, "id"), _str(data, "kind"), _num(data, "duration_seconds"))


@dataclass(frozen=True)
class ProsodyMessage:
    """``prosody``: the speech rate of an utterance (None when it was not judged)."""

    utterance_id: str
    judged: bool
    syllables_per_second: float | None
    ratio: float | None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> ProsodyMessage:
        """Check and build."""
        judged = data.get("judged")
        if not isinstance(judged, bool):
            raise MessageError("judged: expected true or false")
        return cls(
            utterance_id=_str(data, "utterance_id"),
            judged=judged,
            syllables_per_second=_opt_num(data, "syllables_per_second"),
            ratio=_opt_num(data, "ratio"),
        )


#: What an enrolment by voice can be doing (``enrolment``).
ENROLMENT_STATES: Final = ("prompting", "adapting", "done", "failed", "cancelled")


@dataclass(frozen=True)
class EnrolmentMessage:
    """``enrolment``: an enrolment by voice moved on (the ``enrol_speaker`` action)."""

    speaker: str
    state: str
    prompt: int
    prompts: int
    kept: int
    sentence: str
    error: str

    @classmethod
    def parse(cls, data: dict[str, Any]) -> EnrolmentMessage:
        """Check and build."""
        state = _str(data, "state")
        if state not in ENROLMENT_STATES:
            raise MessageError(f"state: expected one of {', '.join(ENROLMENT_STATES)}")
        return cls(
            speaker=_str(data, "speaker"),
            state=state,
            prompt=_int(data, "prompt"),
            prompts=_int(data, "prompts"),
            kept=_int(data, "kept"),
            sentence=_str(data, "sentence"),
            error=_str(data, "error"),
        )


@dataclass(frozen=True)
class MetricsMessage:
    """``metrics`` (retained, every minute): the satellite's counters and gauges, kept for
    diagnostics."""

    counters: dict[str, int]
    gauges: dict[str, float]

    @classmethod
    def parse(cls, data: dict[str, Any]) -> MetricsMessage:
        """Check and build: two objects of numbers."""
        parts: list[dict[str, Any]] = []
        for key in ("counters", "gauges"):
            part = data.get(key)
            if not isinstance(part, dict) or not all(
                isinstance(k, str) and _is_number(v) for k, v in part.items()
            ):
                raise MessageError(f"{key}: expected an object of numbers")
            parts.append(part)
        return cls(counters=dict(parts[0]), gauges=dict(parts[1]))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class SayDoneMessage:
    """``say/done``: an announcement finished."""

    id: str
    status: str
    error: str | None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> SayDoneMessage:
        """Check and build."""
        return cls(_str(data, "id"), _str(data, "status"), _opt_str(data, "error"))


def parse_state(data: dict[str, Any]) -> str:
    """``state``: one of STATES."""
    state = _str(data, "state")
    if state not in STATES:
        raise MessageError(f"state: unknown state {state!r}")
    return state
