"""The active intents: Home Assistant's sentence templates plus our care intents.

``load_intent_set`` reads ``home-assistant-intents`` for the language, merges the care
intents shipped in this package, keeps only the configured intent names, and builds the
slot lists (entity names with their domain and area, areas) that both the STT grammar
and the template recognizer use.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..errors import MissingDependencyError, SatelliteError

if TYPE_CHECKING:
    from hassil import Intents, SlotList

_LOGGER = logging.getLogger(__name__)
_DIR = Path(__file__).resolve().parent

#: Intents answered on the device (see satellite/dialogue.py).
CARE_INTENTS = ("CallForHelp", "GetTime", "GetDate", "Repeat", "Stop", "VolumeUp", "VolumeDown")
#: What the templates make of a thing said that is no command ("yes", "no thanks":
#: ``not_commands``): nothing Home Assistant or the dialogue acts on.
NOT_A_COMMAND = "NotACommand"
#: Intents that switch or change a device.
DEVICE_ACTION_INTENTS = frozenset(
    {
        "HassTurnOn",
        "HassTurnOff",
        "HassLightSet",
        "HassSetPosition",
        "HassClimateSetTemperature",
        "HassFanSetSpeed",
        "HassVacuumStart",
    }
)

#: Words in a device name that tell its HA domain (``guess_domain``).
DOMAIN_WORDS = {
    "light": "light",
    "lights": "light",
    "lamp": "light",
    "fan": "fan",
    "lock": "lock",
    "door": "lock",
    "tv": "media_player",
    "television": "media_player",
    "speaker": "media_player",
    "heater": "climate",
    "thermostat": "climate",
}
#: The domain of a name none of whose words is in DOMAIN_WORDS.
DEFAULT_DOMAIN = "switch"
_NAME_WORDS = re.compile(r"[^\w']+", re.UNICODE)


class UnknownLanguageError(SatelliteError):
    """No sentence templates for the configured language."""


@dataclass(frozen=True, slots=True)
class Entity:
    """A device HA exposes: its spoken name, domain and area."""

    name: str
    domain: str
    area: str | None = None


@dataclass(slots=True)
class IntentSet:
    """Parsed hassil intents restricted to the active names, with slot lists."""

    language: str
    intents: Intents
    slot_lists: dict[str, SlotList]
    names: tuple[str, ...]
    entities: tuple[Entity, ...] = field(default=())
    areas: tuple[str, ...] = field(default=())
    #: The satellite's own area: sentences without one ("turn on the lights") mean it.
    area: str | None = None


def guess_domain(name: str) -> str:
    """The HA domain a device name suggests: "desk lamp" -> light, "tv" -> media_player.

    The words are read from the last one back, so the head noun decides: "fan heater"
    is a heater (climate), "ceiling fan light" a light. Plurals count ("lamps").
    Anything else is a switch.
    """
    for word in reversed(_NAME_WORDS.split(name.casefold())):
        for form in (word, word.removesuffix("s")):
            if form in DOMAIN_WORDS:
                return DOMAIN_WORDS[form]
    return DEFAULT_DOMAIN


def merge_slots(
    configured: Iterable[Entity], names: Iterable[str], areas: Iterable[str]
) -> tuple[tuple[Entity, ...], tuple[str, ...]]:
    """The entity and area lists for the names and areas Home Assistant exposes.

    HA's names and areas replace the configured lists. A name that matches a configured
    entity (ignoring case and extra spaces) keeps that entity's domain and area (spelt
    as HA spells the area, when HA has it); any other name gets ``guess_domain`` and no
    area. Names and areas keep HA's spelling and order; repeats are dropped.
    """
    known = {_key(e.name): e for e in configured}
    area_list = _unique(areas)
    spelt = {_key(a): a for a in area_list}
    entities = []
    for name in _unique(names):
        entity = known.get(_key(name))
        if entity is None:
            entities.append(Entity(name, guess_domain(name)))
        else:
            area = spelt.get(_key(entity.area), entity.area) if entity.area else None
            entities.append(Entity(name, entity.domain, area))
    return tuple(entities), area_list


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def _unique(texts: Iterable[str]) -> tuple[str, ...]:
    """Stripped, non-empty, first spelling of each (ignoring case)."""
    seen: dict[str, str] = {}
    for text in texts:
        clean = " ".join(text.split())
        if clean:
            seen.setdefault(_key(clean), clean)
    return tuple(seen.values())


def care_intents_yaml(language: str) -> dict[str, Any]:
    """The care intents for ``language`` (English templates for en_*)."""
    path = _DIR / f"care_{language.split('_', maxsplit=1)[0]}.yaml"
    if not path.is_file():
        raise UnknownLanguageError(
            f"No care intents for language {language!r}. Fix: set satellite.language to "
            f"one of: {', '.join(sorted(p.stem[5:] for p in _DIR.glob('care_*.yaml')))}"
        )
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def _templates(language: str, key: str) -> tuple[str, ...]:
    """The care intents' templates listed under ``key`` in ``language``."""
    return tuple(str(t) for t in care_intents_yaml(language).get(key, ()))


def not_commands(language: str) -> tuple[str, ...]:
    """The templates of things said that are no command, in ``language`` (the care
    intents' ``not_commands``): see nlu/help_answers.help_check_intent_set."""
    return _templates(language, "not_commands")


def greetings(language: str) -> tuple[str, ...]:
    """The templates of greetings in ``language`` (the care intents' ``greetings``: no
    command either, but never beside a call in the help check)."""
    return _templates(language, "greetings")


def like_a_call(language: str) -> tuple[str, ...]:
    """The templates of things said that are no command but sound like part of a call
    for help (the care intents' ``like_a_call``): only beside a call in the search that
    confirms it (nlu/help_answers.help_confirm_intent_set)."""
    return _templates(language, "like_a_call")


def fillers(language: str) -> tuple[str, ...]:
    """The templates of sounds made while thinking ("oh", "hmm"; the care intents'
    ``fillers``): only beside a sentence heard in the short check (stt/answer_grammar)."""
    return _templates(language, "fillers")


def no_action_words(language: str) -> frozenset[str]:
    """The words that name no action in ``language`` (the care intents'
    ``no_action_words``): a device action heard as its slots' words and these alone is a
    bare name, asked about before it is acted on (nlu/trust.doubtful)."""
    return frozenset(w.lower() for w in _templates(language, "no_action_words"))


def load_intent_set(
    language: str,
    names: tuple[str, ...],
    entities: tuple[Entity, ...],
    areas: tuple[str, ...],
    area: str | None = None,
) -> IntentSet:
    """Build the active intent set; unknown names or languages raise with the fix."""
    try:
        import hassil  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("hassil", None, "Intent recognition") from err
    try:
        import home_assistant_intents  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("home-assistant-intents", None, "HA intents") from err
    ha_data = home_assistant_intents.get_intents(language.split("_", maxsplit=1)[0])
    if ha_data is None:
        raise UnknownLanguageError(
            f"home-assistant-intents has no sentences for language {language!r}. Fix: set "
            f"satellite.language to a supported code such as en"
        )
    care = care_intents_yaml(language)
    merged = dict(ha_data)
    merged["intents"] = {**ha_data["intents"], **care["intents"]}
    intents = hassil.Intents.from_dict(merged)
    unknown = [n for n in names if n not in intents.intents]
    if unknown:
        raise SatelliteError(
            f"Unknown intent(s) {', '.join(unknown)} for language {language!r}. Fix: use "
            f"names from: {', '.join(sorted(intents.intents))}"
        )
    intents.intents = {n: intents.intents[n] for n in names}
    slot_lists: dict[str, SlotList] = dict(intents.slot_lists)
    slot_lists["name"] = hassil.TextSlotList.from_tuples(
        [
            (e.name, e.name, {"domain": e.domain, **({"area": e.area} if e.area else {})})
            for e in entities
        ],
        allow_template=False,
    )
    all_areas = sorted({*areas, *(e.area for e in entities if e.area), *([area] if area else [])})
    slot_lists["area"] = hassil.TextSlotList.from_strings(all_areas, allow_template=False)
    slot_lists.setdefault("floor", hassil.TextSlotList.from_strings([], allow_template=False))
    return IntentSet(language, intents, slot_lists, names, entities, tuple(all_areas), area)
