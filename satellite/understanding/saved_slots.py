"""Home Assistant's last names and areas, kept on disk so that a start begins with them.

HA publishes the names and areas it exposes retained, on ``slots``. A satellite that
started from its configured lists built its grammar twice at every start: once for the
configuration, and again for HA's lists when the retained message came, with a second
recognizer beside the first while it was built (the start's memory peak, bench
slot_rebuild.py), and HA's names unheard until then, or for good while the broker was
down. The lists last swapped in are kept here, and a start builds for them (a grammar
read back from the disk cache); the retained message, the same lists, needs no build.
A missing, unreadable or damaged file only means starting from the configuration.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

from ..config import Config
from ..files import replace_atomically
from ..nlu.intents import Entity, merge_slots

_LOGGER = logging.getLogger(__name__)
#: The longest name or area HA may send (as the ``slots`` payload allows).
LONGEST = 200

#: Names and areas as HA sent them.
RawLists = tuple[tuple[str, ...], tuple[str, ...]]


class SavedSlots:
    """The names and areas HA exposed last, in one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_config(cls, config: Config) -> SavedSlots:
        """Beside the MQTT outbox (what came from HA is kept with what goes to it), one
        file per satellite id."""
        state = Path(config.mqtt.outbox_path).expanduser().parent
        return cls(state / f"ha-slots-{config.satellite.id}.json")

    def load(self) -> RawLists | None:
        """The saved lists; None when there are none or they cannot be used (logged)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            names, areas = data["names"], data["areas"]
            if not all(
                isinstance(v, list) and all(isinstance(s, str) and 0 < len(s) <= LONGEST for s in v)
                for v in (names, areas)
            ):
                raise ValueError("names and areas must be lists of 1-200 characters")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as err:
            _LOGGER.warning(
                "Home Assistant's saved names in %s are unreadable (%s): starting from the "
                "configured ones until Home Assistant sends its own",
                self.path,
                err,
            )
            return None
        return tuple(names), tuple(areas)

    def save(self, names: tuple[str, ...], areas: tuple[str, ...]) -> None:
        """Keep these lists for the next start (atomically; a failure is only logged)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps({"names": list(names), "areas": list(areas)})
            replace_atomically(self.path, text)
        except OSError as err:
            _LOGGER.warning("Cannot keep Home Assistant's names in %s: %s", self.path, err)


def starting_config(
    config: Config, saved: SavedSlots
) -> tuple[Config, tuple[tuple[Entity, ...], tuple[str, ...]] | None]:
    """``config`` with HA's saved lists in place of the configured ones, and those
    lists (merged as ``slots`` merges them); ``config`` itself when none are saved."""
    raw = saved.load()
    if raw is None:
        return config, None
    entities, areas = merge_slots(config.nlu.entities, *raw)
    _LOGGER.info(
        "Starting with Home Assistant's %d names and %d areas saved last time",
        len(entities),
        len(areas),
    )
    nlu = dataclasses.replace(config.nlu, entities=entities, areas=areas)
    return dataclasses.replace(config, nlu=nlu), (entities, areas)
