"""Two hearings of a request agree when they would do the same: "turn on the kitchen
light" (its name) and "turn on the kitchen lights" (its area and domain) switch the same
device where the kitchen holds one light (nlu/targets.py). eSpeak's "kitchen light" in
pink noise was heard both ways as "kitchen lights" and counted wrong, though it did what
was asked; where the two hearings of a noisy room differ only so, they agree.

Where the kitchen holds two lights they are other requests, and other slots (a
brightness, a colour) must still be the same."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from satellite.actions import HaIntentRequested, ReplyRequested
from satellite.nlu import trust
from satellite.nlu.intents import Entity
from satellite.nlu.recognizer import IntentResult
from satellite.nlu.settings import DEFAULT_ENTITIES
from satellite.nlu.targets import targets_of
from satellite.understanding.dialogue import REPLIES, Dialogue
from tests.robustness import RIGHT, WRONG, outcome
from tests.understand import template_reader

Reader = Callable[[str], IntentResult]


@pytest.fixture(scope="module")
def home() -> Reader:
    """The default home: one light in the kitchen."""
    return template_reader(DEFAULT_ENTITIES)


@pytest.fixture(scope="module")
def two_lights() -> Reader:
    """A kitchen with a second light."""
    return template_reader((*DEFAULT_ENTITIES, Entity("kitchen spots", "light", "kitchen")))


def test_the_name_and_the_rooms_lights_are_the_same_request_in_a_room_of_one(
    home: Reader,
) -> None:
    named, roomed = home("turn on the kitchen light"), home("turn on the kitchen lights")
    assert named.slots == {"name": "kitchen light"}
    assert roomed.slots == {"area": "kitchen", "domain": "light"}
    assert named.targets == roomed.targets == frozenset({"kitchen light"})
    assert trust.same_request(named, roomed) and trust.same_request(roomed, named)


def test_not_where_the_room_holds_two(two_lights: Reader) -> None:
    named = two_lights("turn on the kitchen light")
    roomed = two_lights("turn on the kitchen lights")
    assert roomed.targets == frozenset({"kitchen light", "kitchen spots"})
    assert not trust.same_request(named, roomed)


def test_other_intents_other_devices_and_other_settings_stay_apart(home: Reader) -> None:
    lights = home("turn on the kitchen lights")
    assert not trust.same_request(home("turn off the kitchen light"), lights)
    assert not trust.same_request(home("turn on the bedroom lamp"), lights)
    dim = home("set the kitchen light to 30 percent")
    bright = home("set the kitchen brightness to 80 percent")
    assert dim.intent == bright.intent == "HassLightSet" and dim.targets == bright.targets
    assert not trust.same_request(dim, bright)
    assert trust.same_request(dim, home("set the lights in the kitchen to 30 percent"))


def test_what_picks_no_known_device_is_compared_by_its_words() -> None:
    # no name and no area: the satellite's own area and Home Assistant decide
    assert targets_of({"domain": "light"}, DEFAULT_ENTITIES) is None
    # a name the home does not hold, or one in another room
    assert targets_of({"name": "pizza"}, DEFAULT_ENTITIES) is None
    assert targets_of({"name": "kitchen light", "area": "hall"}, DEFAULT_ENTITIES) is None
    timer = IntentResult("HassStartTimer", {"seconds": 30})
    assert not trust.same_request(timer, IntentResult("HassStartTimer", {"seconds": 13}))


def test_a_doubtful_request_repeated_in_other_words_for_the_same_device_goes_out(
    home: Reader,
) -> None:
    dialogue = Dialogue()
    asked = dialogue.handle(home("turn on the kitchen light"), "u1", 1.0, doubtful=True)
    assert [e.text for e in asked if isinstance(e, ReplyRequested)] == [REPLIES["say_again"]]
    again = dialogue.handle(home("turn on the kitchen lights"), "u2", 4.0, doubtful=True)
    assert [e.intent for e in again if isinstance(e, HaIntentRequested)] == ["HassTurnOn"]


def test_the_bench_counts_what_was_done(home: Reader) -> None:
    said = {"name": "kitchen light"}
    assert outcome(home("turn on the kitchen lights"), "HassTurnOn", said) == RIGHT
    assert outcome(home("turn on the living room lights"), "HassTurnOn", said) == WRONG
