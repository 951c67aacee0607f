"""The base of every event: a frozen dataclass with a ``type`` name and checked dicts.

Every event is a frozen dataclass with a ``type`` name, ``to_dict`` and ``from_dict``;
these dictionaries are the JSON that the CLI prints and MQTT carries. Fields whose
metadata says ``serialize=False`` (audio) stay on the device and are not part of the dict.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Self, TypeVar, get_type_hints

_REGISTRY: dict[str, type[Event]] = {}

E = TypeVar("E", bound="Event")
D = TypeVar("D")


class EventDecodeError(ValueError):
    """A dictionary does not describe a valid event."""


@dataclass(frozen=True)
class Event:
    """Base of all events. ``timestamp_seconds`` is seconds from the start of input."""

    type_name: ClassVar[str] = ""

    timestamp_seconds: float

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("type_name", "")
        if name:
            if name in _REGISTRY:
                raise TypeError(f"Event type {name!r} is defined twice")
            _REGISTRY[name] = cls

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with a ``type`` field; audio fields are left out."""
        return {"type": self.type_name, **fields_to_dict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Parse a dict made by ``to_dict``; raise EventDecodeError when it is invalid."""
        if not isinstance(data, dict):
            raise EventDecodeError(f"An event must be a JSON object, got {type(data).__name__}")
        return fields_from_dict(cls, data, cls.type_name, ignore=frozenset({"type"}))


def event_classes() -> dict[str, type[Event]]:
    """All registered event classes by type name."""
    return dict(_REGISTRY)


def event_from_dict(data: dict[str, Any]) -> Event:
    """Decode any registered event from its dict (uses the ``type`` field)."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise EventDecodeError("An event needs a string 'type' field")
    cls = _REGISTRY.get(data["type"])
    if cls is None:
        raise EventDecodeError(f"Unknown event type {data['type']!r}")
    return cls.from_dict(data)


def fields_to_dict(obj: Any) -> dict[str, Any]:
    """The serialisable fields of a dataclass instance as a JSON-ready dict.

    Shared by events and MQTT payloads. Fields whose metadata says ``serialize=False``
    are left out; tuples become lists.
    """
    return {
        f.name: _plain(getattr(obj, f.name))
        for f in dataclasses.fields(obj)
        if f.metadata.get("serialize", True)
    }


def fields_from_dict(
    cls: type[D], data: Any, where: str, ignore: frozenset[str] = frozenset()
) -> D:
    """Build dataclass ``cls`` from a decoded JSON object, checking every field's type.

    Shared by events and MQTT payloads. Raises EventDecodeError (naming ``where``) for a
    non-object, a missing required field, a value of the wrong type or an unknown key;
    keys in ``ignore`` are allowed and skipped.
    """
    if not isinstance(data, dict):
        raise EventDecodeError(f"{where}: expected a JSON object, got {type(data).__name__}")
    hints = get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.metadata.get("serialize", True):
            continue
        if f.name not in data:
            if f.default is not dataclasses.MISSING or (
                f.default_factory is not dataclasses.MISSING
            ):
                continue
            raise EventDecodeError(f"{where}: missing field {f.name!r}")
        kwargs[f.name] = _check(where, f.name, data[f.name], hints[f.name])
    extra = set(data) - {f.name for f in dataclasses.fields(cls)} - ignore  # type: ignore[arg-type]
    if extra:
        raise EventDecodeError(f"{where}: unknown fields {sorted(map(str, extra))}")
    return cls(**kwargs)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _check(type_name: str, name: str, value: Any, hint: Any) -> Any:
    """Validate a decoded JSON value against a simple annotation."""
    allowed: tuple[type, ...]
    optional = False
    text = str(hint)
    if hint is float:
        allowed = (int, float)
    elif hint is int:
        allowed = (int,)
    elif hint is str:
        allowed = (str,)
    elif hint is bool:
        allowed = (bool,)
    elif text in ("str | None", "typing.Optional[str]"):
        allowed, optional = (str,), True
    elif text in ("float | None", "typing.Optional[float]"):
        allowed, optional = (int, float), True
    elif text in ("int | None", "typing.Optional[int]"):
        allowed, optional = (int,), True
    elif text.startswith("dict[str"):
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise EventDecodeError(f"{type_name}.{name}: expected a JSON object")
        return dict(value)
    elif text.startswith("tuple[str"):
        if value is None and text.endswith("| None"):
            return None
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise EventDecodeError(f"{type_name}.{name}: expected a list of strings")
        return tuple(value)
    else:
        return value
    if value is None and optional:
        return None
    if isinstance(value, bool) and hint is not bool:
        raise EventDecodeError(f"{type_name}.{name}: expected a number, got a boolean")
    if not isinstance(value, allowed):
        raise EventDecodeError(
            f"{type_name}.{name}: expected {allowed[0].__name__}, got {type(value).__name__}"
        )
    return float(value) if allowed[0] is int and len(allowed) == 2 else value
