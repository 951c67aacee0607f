"""Settings of understanding (config sections ``nlu`` and ``llm``).

The active intents with the devices and areas they talk about, and the LLM fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import voluptuous as vol

from ..config_base import Section, check_boolean, check_integer, check_number, check_pattern, option
from .intents import Entity

DEFAULT_INTENTS = (
    "HassTurnOn",
    "HassTurnOff",
    "HassLightSet",
    "HassGetState",
    "HassNevermind",
    "HassStartTimer",
    "CallForHelp",
    "GetTime",
    "GetDate",
    "Repeat",
    "Stop",
    "VolumeUp",
    "VolumeDown",
)
DEFAULT_ENTITIES = (
    Entity("kitchen light", "light", "kitchen"),
    Entity("bedroom lamp", "light", "bedroom"),
    Entity("living room light", "light", "living room"),
    Entity("reading lamp", "light", "study"),
    Entity("ceiling fan", "fan", "living room"),
    Entity("front door", "lock", "hall"),
    Entity("television", "media_player", "living room"),
    Entity("heater", "climate", "bathroom"),
)


def _names(what: str) -> Callable[[Any], tuple[str, ...]]:
    def check(value: Any) -> tuple[str, ...]:
        if isinstance(value, tuple):
            value = list(value)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise vol.Invalid(
                f"expected a list of {what}, got {value!r}. Fix: write a YAML list such as [a, b]"
            )
        return tuple(value)

    return check


def _entities(value: Any) -> tuple[Entity, ...]:
    """Each item a mapping of name, domain and optional area (or already an Entity)."""
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        raise vol.Invalid(
            f"expected a list of entities, got {value!r}. Fix: list items "
            "like {name: kitchen light, domain: light, area: kitchen}"
        )
    out: list[Entity] = []
    for index, item in enumerate(value):
        if isinstance(item, Entity):
            out.append(item)
            continue
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(item.get("domain"), str)
            or not set(item) <= {"name", "domain", "area"}
            or not isinstance(item.get("area", ""), str)
        ):
            raise vol.Invalid(
                f"item {index} is not an entity ({item!r}). Fix: give name and "
                "domain (and optionally area), e.g. {name: kitchen light, "
                "domain: light, area: kitchen}"
            )
        out.append(Entity(item["name"], item["domain"], item.get("area")))
    return tuple(out)


@dataclass(frozen=True)
class NluSettings(Section):
    """Intents and the things they talk about."""

    intents: tuple[str, ...] = field(
        default=DEFAULT_INTENTS, metadata={"check": _names("intent names"), "doc": "Active intents"}
    )
    entities: tuple[Entity, ...] = field(
        default=DEFAULT_ENTITIES,
        metadata={"check": _entities, "doc": "Devices: name, domain, area"},
    )
    areas: tuple[str, ...] = field(
        default=("garden",),
        metadata={"check": _names("area names"), "doc": "Areas besides the entities' own"},
    )
    ha_timeout_seconds: float = option(
        5.0, check_number(0.5, 60.0, " s"), "Wait this long for HA's answer, s (0.5-60)"
    )


@dataclass(frozen=True)
class LlmSettings(Section):
    """The small local LLM that classifies what the templates miss."""

    enabled: bool = option(True, check_boolean, "Use the LLM fallback (needs the llm extra)")
    model: str = option(
        "gemma3-270m",
        check_pattern(r".+", "a model"),
        "gemma3-270m (from its PyPI package) or a .gguf path",
    )
    threads: int = option(1, check_integer(1, 8), "CPU threads (1-8)")
    timeout_seconds: float = option(
        2.0, check_number(0.1, 30.0, " s"), "Give up and answer 'not understood' after, s"
    )
    min_confidence: float = option(
        0.3, check_number(0.0, 1.0), "Below this label probability: not understood (0-1)"
    )
