"""What a request acts on: the devices its target slots name in the home.

"Turn on the kitchen light" (``name``) and "turn on the kitchen lights" (``area`` and
``domain``) switch the same device where the kitchen holds one light. Two hearings of a
request, or a request and its repeat, are the same request when they would do the same
(trust.same_request): the same intent, the same other slots, the same devices.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .intents import Entity

#: The slots that pick the devices a request acts on.
TARGET_SLOTS = frozenset({"name", "area", "domain"})


def targets_of(slots: Mapping[str, Any], entities: Iterable[Entity]) -> frozenset[str] | None:
    """The names of the devices ``slots`` pick among ``entities``: the one named (in the
    area and domain given, if any), or every one of the domain in the area. None where
    that is not known here: no name and no area (the satellite's own area and Home
    Assistant decide), or nothing picked."""
    name, area, domain = (slots.get(key) for key in ("name", "area", "domain"))
    if name is None and area is None:
        return None
    picked = frozenset(
        entity.name
        for entity in entities
        if (name is None or entity.name == name)
        and (area is None or entity.area == area)
        and (domain is None or entity.domain == domain)
    )
    return picked or None


def names_no_device(slots: Mapping[str, Any], entities: Iterable[Entity]) -> bool:
    """Whether ``slots`` put what they name (a device, or a domain) in an area where no
    known device of it is: "the study heater" with the heater in the bathroom, a
    mishearing Home Assistant would refuse ("can you sing me a song" heard as "can you
    study my heater to on"). False where that is not known here: no area, nothing else
    named, no known device of it, or one whose area is not known."""
    name, area, domain = (slots.get(key) for key in ("name", "area", "domain"))
    if area is None or (name is None and domain is None):
        return False
    named = [
        entity
        for entity in entities
        if (name is None or entity.name == name) and (domain is None or entity.domain == domain)
    ]
    if not named or any(entity.area is None for entity in named):
        return False
    return all(entity.area != area for entity in named)


def other_slots(slots: Mapping[str, Any]) -> dict[str, Any]:
    """``slots`` but its target slots: what a request sets on its devices."""
    return {key: value for key, value in slots.items() if key not in TARGET_SLOTS}
