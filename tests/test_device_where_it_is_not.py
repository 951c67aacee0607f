"""A device action that puts a device in a room where it is not, "the study heater" with
the heater in the bathroom, is a mishearing: Home Assistant would refuse it, and the
satellite does not act on it (nlu/targets.names_no_device). The grammar search makes
such pairs of out-of-domain speech: flite's "can you sing me a song" came out "can you
study my heater to on" twice, and the dialogue acted on it (bench/robustness.py, clean
room, session 32).

Where the satellite does not know a device's room, Home Assistant decides."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from satellite.config import Config
from satellite.nlu.intents import Entity
from satellite.nlu.recognizer import IntentResult
from satellite.nlu.settings import DEFAULT_ENTITIES
from satellite.nlu.targets import names_no_device
from tests import corpus, robustness
from tests.understand import template_reader

Reader = Callable[[str], IntentResult]


@pytest.fixture(scope="module")
def home() -> Reader:
    """The default home: the heater in the bathroom, the reading lamp in the study."""
    return template_reader(DEFAULT_ENTITIES)


@pytest.mark.parametrize(
    "said",
    [
        "can you study my heater to on",
        "turn on the heater in the study",
        "turn off the kitchen reading lamp",
        "turn on the lights in the hall",  # the hall holds only the front door
        "i'd like to my hall blue",  # eSpeak's "I can't move my arm" (tests/test_bare_names)
    ],
)
def test_a_device_action_where_no_such_device_is_is_not_understood(home: Reader, said: str) -> None:
    assert home(said).intent is None


@pytest.mark.parametrize(
    ("said", "intent"),
    [
        ("turn on the heater in the bathroom", "HassTurnOn"),
        ("turn on the lights in the study", "HassTurnOn"),
        ("turn off the reading lamp", "HassTurnOff"),
        ("set the bedroom lamp to fifty percent", "HassLightSet"),
    ],
)
def test_where_it_is_the_action_stands(home: Reader, said: str, intent: str) -> None:
    assert home(said).intent == intent


def test_a_device_whose_room_is_not_known_is_left_to_home_assistant() -> None:
    unplaced = tuple(
        Entity(e.name, e.domain, None) if e.name == "heater" else e for e in DEFAULT_ENTITIES
    )
    assert template_reader(unplaced)("turn on the heater in the study").intent == "HassTurnOn"


def test_what_is_not_known_here_is_not_refused() -> None:
    entities = DEFAULT_ENTITIES
    assert not names_no_device({"area": "study"}, entities)  # the room alone
    assert not names_no_device({"name": "heater"}, entities)  # no room
    assert not names_no_device({"area": "study", "domain": "vacuum"}, entities)  # none known
    assert names_no_device({"area": "study", "name": "heater"}, entities)
    assert names_no_device({"area": "hall", "domain": "light"}, entities)
    assert not names_no_device({"area": "bathroom", "name": "heater"}, entities)


def test_flites_song_request_switches_nothing() -> None:
    """The bench's case end to end: flite ``rms`` asking for a song in a clean room, said
    again when the satellite asks (the pessimist's person), is never acted on as a device
    action (no LLM: out-of-domain speech is not understood)."""
    voice = corpus.installed("flite/rms@1.15")
    config = Config()
    understanding = robustness.listener(config)
    _, heard = robustness.judge(
        config, understanding, voice, "can you sing me a song", corpus.Room("clean"), None, {}, 0
    )
    acted = robustness.acted_on(heard.first, *heard.again)
    assert not robustness.device_switched_by(acted), (heard.first, heard.again)
