"""Names a real home's Home Assistant exposes: for tests and benches of large slot lists.

A deterministic mix like a house with a few hundred entities: area-and-kind names
("kitchen ceiling light"), numbered ones ("hall light 2"), and names of their own
("christmas tree", "coffee machine"). Every word is in CMUdict.
"""

from __future__ import annotations

#: Twenty areas.
AREAS = (
    "kitchen",
    "bedroom",
    "living room",
    "bathroom",
    "hall",
    "office",
    "garage",
    "porch",
    "dining room",
    "study",
    "guest room",
    "laundry",
    "attic",
    "basement",
    "garden",
    "nursery",
    "pantry",
    "landing",
    "cellar",
    "playroom",
)
KINDS = (
    "ceiling light",
    "lamp",
    "light",
    "fan",
    "heater",
    "speaker",
    "blind",
    "plug",
    "reading lamp",
    "floor lamp",
    "desk lamp",
    "night light",
    "radiator",
    "window",
    "television",
)
OWN = (
    "christmas tree",
    "coffee machine",
    "kettle",
    "dishwasher",
    "washing machine",
    "aquarium pump",
    "fountain",
    "doorbell",
    "sprinkler",
    "dehumidifier",
    "air purifier",
    "hot tub",
    "towel rail",
    "porch swing light",
    "bird feeder camera",
    "garden gate",
    "electric blanket",
    "printer",
    "fridge",
    "freezer",
)


def home_names(count: int) -> tuple[str, ...]:
    """``count`` distinct entity names: own names first, then area and kind, then
    numbered kinds ("hall light 2")."""
    names: list[str] = list(OWN[: min(count, len(OWN))])
    combos = [f"{area} {kind}" for kind in KINDS for area in AREAS]
    names.extend(combos[: max(0, count - len(names))])
    number = 2
    while len(names) < count:
        names.extend(f"{c} {number}" for c in combos[: count - len(names)])
        number += 1
    return tuple(names[:count])


def distinct_names(count: int, vocabulary: list[str]) -> tuple[str, ...]:
    """``count`` two-word names that share as little as names can: the worst case for
    the grammar's size (every name its own first and last word, where ``vocabulary`` is
    long enough)."""
    size = len(vocabulary)
    return tuple(f"{vocabulary[i % size]} {vocabulary[(i * 7 + 3) % size]}" for i in range(count))
