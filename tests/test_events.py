"""Every event class round-trips through its dict and JSON."""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import typing
from typing import Any

import pytest

import satellite
from satellite.events import Event, EventDecodeError, event_classes, event_from_dict


def _import_all() -> None:
    for module in pkgutil.walk_packages(satellite.__path__, "satellite."):
        if module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:  # an optional extra that is not installed
            continue


_import_all()

_SAMPLES: dict[Any, Any] = {float: 1.25, int: 3, str: "text", bool: True}


def _example(cls: type[Event]) -> Event:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.metadata.get("serialize", True):
            continue
        hint = hints[f.name]
        if hint in _SAMPLES:
            kwargs[f.name] = _SAMPLES[hint]
        elif str(hint).startswith("tuple[str"):
            kwargs[f.name] = ("a", "b")
        elif str(hint).startswith("dict[str"):
            kwargs[f.name] = {"name": "kitchen light", "brightness": 50}
        elif type(None) in typing.get_args(hint):
            inner = next(a for a in typing.get_args(hint) if a is not type(None))
            kwargs[f.name] = _SAMPLES.get(inner)
        else:
            raise AssertionError(f"{cls.__name__}.{f.name}: add an example for {hint}")
    return cls(**kwargs)


def test_there_are_events() -> None:
    names = set(event_classes())
    assert {
        "wake_detected",
        "speech_started",
        "utterance_ended",
        "stage_error",
        "state_changed",
        "listening_timeout",
    } <= names


@pytest.mark.parametrize("name", sorted(event_classes()))
def test_round_trip(name: str) -> None:
    cls = event_classes()[name]
    event = _example(cls)
    data = json.loads(json.dumps(event.to_dict()))
    assert data["type"] == name
    assert event_from_dict(data) == event
    assert cls.from_dict(data) == event


@pytest.mark.parametrize("name", sorted(event_classes()))
def test_rejects_wrong_types_and_unknown_fields(name: str) -> None:
    cls = event_classes()[name]
    data = _example(cls).to_dict()
    with pytest.raises(EventDecodeError):
        event_from_dict({**data, "unexpected": 1})
    with pytest.raises(EventDecodeError):
        event_from_dict({**data, "timestamp_seconds": "soon"})
    with pytest.raises(EventDecodeError):
        event_from_dict({k: v for k, v in data.items() if k != "timestamp_seconds"})


def test_unknown_type_and_non_objects() -> None:
    with pytest.raises(EventDecodeError):
        event_from_dict({"type": "no_such_event", "timestamp_seconds": 1.0})
    with pytest.raises(EventDecodeError):
        event_from_dict([])  # type: ignore[arg-type]
