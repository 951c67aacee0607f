"""The trust rules (satellite/nlu/trust.py): pure functions of the result, its reading,
the room and the settings."""

from __future__ import annotations

import dataclasses

import pytest

from satellite.nlu import trust
from satellite.nlu.recognizer import IntentResult
from satellite.stt.base import SttResult
from satellite.stt.settings import SttSettings

SETTINGS = SttSettings(
    rejection_threshold=-30.0, device_margin=8.0, home_margin=5.0, loud_shift=4.0
)
TIME = IntentResult("GetTime")
LIGHT = IntentResult("HassTurnOn", {"name": "kitchen light"})
TIMER = IntentResult("HassStartTimer", {"minutes": 5})


@pytest.mark.parametrize(
    ("result", "loud", "shift", "need"),
    [
        (TIME, False, 0.0, -30.0),  # a care intent
        (TIMER, False, 0.0, -25.0),  # Home Assistant's other intents
        (LIGHT, False, 0.0, -22.0),  # a device action
        (LIGHT, True, 0.0, -18.0),  # in a loud room
        (TIME, True, 1.5, -24.5),  # and asked for more
    ],
)
def test_the_score_needed_rises_with_what_is_at_stake_and_the_noise(
    result: IntentResult, loud: bool, shift: float, need: float
) -> None:
    assert trust.needed_score(result, loud, SETTINGS, shift) == need


def test_a_result_is_scored_enough_in_the_domain_only() -> None:
    heard = SttResult("what time is it", 0.5, (), True, -29.0)
    assert trust.scored_enough(heard, TIME, False, SETTINGS)
    assert not trust.scored_enough(heard, TIME, True, SETTINGS)  # a loud room needs -26
    assert not trust.scored_enough(heard, TIME, False, SETTINGS, shift=1.5)
    assert not trust.scored_enough(heard, IntentResult(None), False, SETTINGS)
    assert not trust.scored_enough(
        dataclasses.replace(heard, in_grammar=False), TIME, False, SETTINGS
    )
    unscored = dataclasses.replace(heard, score_per_frame=None)  # as the engine says
    assert trust.scored_enough(unscored, LIGHT, True, SETTINGS)
    assert trust.score_margin(unscored, TIME, False, SETTINGS) is None
    assert trust.score_margin(heard, TIME, False, SETTINGS) == 1.0


def test_only_a_device_action_in_a_loud_room_must_agree() -> None:
    assert trust.must_agree(LIGHT, True, SETTINGS)
    assert not trust.must_agree(LIGHT, False, SETTINGS)
    assert not trust.must_agree(TIME, True, SETTINGS)
    assert not trust.must_agree(LIGHT, True, dataclasses.replace(SETTINGS, agree_when_loud=False))
    assert trust.same_request(LIGHT, IntentResult("HassTurnOn", {"name": "kitchen light"}, 0.9))
    assert not trust.same_request(LIGHT, IntentResult("HassTurnOn", {"name": "desk lamp"}))


def test_a_follow_on_is_let_pass_when_not_understood_or_asked_before() -> None:
    assert trust.let_pass(IntentResult(None), TIME)
    assert trust.let_pass(IntentResult(None), None)
    assert trust.let_pass(TIME, TIME)
    assert not trust.let_pass(LIGHT, TIME)
    assert not trust.let_pass(TIME, None)
