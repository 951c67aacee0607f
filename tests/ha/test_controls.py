"""Mute switch, volume number, wake word select and Assist's wake word configuration:
each sends the golden ``control`` payload, and what HA set comes back after restarts."""

from __future__ import annotations

from typing import Any
from unittest.mock import MagicMock

import pytest
from homeassistant.components.assist_satellite import AssistSatelliteConfiguration
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNKNOWN
from homeassistant.core import HomeAssistant, State
from homeassistant.exceptions import HomeAssistantError
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    mock_restore_cache_with_extra_data,
)

from .conftest import example, fire, golden, published

MUTE = "switch.kitchen_mute"
VOLUME = "number.kitchen_volume"
WAKE_WORD = "select.kitchen_wake_word"
SATELLITE = "assist_satellite.kitchen"


def _state(hass: HomeAssistant, entity_id: str) -> State:
    state = hass.states.get(entity_id)
    assert state is not None, entity_id
    return state


async def _call(hass: HomeAssistant, domain: str, service: str, data: dict[str, Any]) -> None:
    await hass.services.async_call(domain, service, data, blocking=True)
    await hass.async_block_till_done()


async def test_mute_switch_follows_the_satellite_and_sends_mute(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    assert _state(hass, MUTE).state == STATE_OFF
    await _call(hass, "switch", "turn_on", {"entity_id": MUTE})
    assert published(mqtt_mock, "control") == [example("control", 0)]
    # The switch shows what the satellite says, not what was asked.
    assert _state(hass, MUTE).state == STATE_OFF
    fire(hass, "state", example("state", 1))  # muted
    await hass.async_block_till_done()
    assert _state(hass, MUTE).state == STATE_ON
    await _call(hass, "switch", "turn_off", {"entity_id": MUTE})
    assert published(mqtt_mock, "control")[-1] == example("control", 1)


async def test_volume_is_sent_and_shown(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    assert _state(hass, VOLUME).state == STATE_UNKNOWN  # the satellite does not report it
    await _call(hass, "number", "set_value", {"entity_id": VOLUME, "value": 40})
    assert published(mqtt_mock, "control") == [example("control", 3)]
    assert float(_state(hass, VOLUME).state) == 40


async def test_wake_word_select_and_assist_configuration(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    select = _state(hass, WAKE_WORD)
    assert select.attributes["options"] == ["okay_nabu", "hey_jarvis"]
    assert select.state == "okay_nabu"
    await _call(hass, "select", "select_option", {"entity_id": WAKE_WORD, "option": "hey_jarvis"})
    wake_words = example("control", 4)
    assert published(mqtt_mock, "control") == [wake_words]
    assert _state(hass, WAKE_WORD).state == "hey_jarvis"

    entity = hass.data["assist_satellite"].get_entity(SATELLITE)
    config = entity.async_get_configuration()
    assert config.active_wake_words == ["hey_jarvis"]
    assert config.max_active_wake_words == 2
    both = AssistSatelliteConfiguration(
        available_wake_words=config.available_wake_words,
        active_wake_words=["okay_nabu", "hey_jarvis"],
        max_active_wake_words=2,
    )
    await entity.async_set_configuration(both)
    await hass.async_block_till_done()
    assert published(mqtt_mock, "control")[-1] == {
        **wake_words,
        "wake_words": both.active_wake_words,
    }
    assert _state(hass, WAKE_WORD).state == "okay_nabu"

    alexa = AssistSatelliteConfiguration(
        available_wake_words=[], active_wake_words=["alexa"], max_active_wake_words=1
    )
    why = r"not loaded the wake word\(s\) alexa; choose among okay_nabu, hey_jarvis"
    with pytest.raises(HomeAssistantError, match=why):
        await entity.async_set_configuration(alexa)
    assert len(published(mqtt_mock, "control")) == 2


async def test_a_satellite_that_no_longer_loads_the_chosen_word_uses_its_own(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    await _call(hass, "select", "select_option", {"entity_id": WAKE_WORD, "option": "hey_jarvis"})
    fire(hass, "info", {**example("info"), "wake_words": ["alexa", "okay_nabu"]})
    await hass.async_block_till_done()
    select = _state(hass, WAKE_WORD)
    assert select.attributes["options"] == ["alexa", "okay_nabu"]
    assert select.state == "alexa"


async def test_settings_are_sent_again_when_the_satellite_comes_back(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    fire(hass, "status", "online")  # still online: nothing to send
    await hass.async_block_till_done()
    assert published(mqtt_mock, "control") == []
    await _call(hass, "number", "set_value", {"entity_id": VOLUME, "value": 40})
    await _call(hass, "select", "select_option", {"entity_id": WAKE_WORD, "option": "hey_jarvis"})
    mqtt_mock.async_publish.reset_mock()
    fire(hass, "status", "offline")  # it restarts and forgets them
    await hass.async_block_till_done()
    fire(hass, "status", "online")
    await hass.async_block_till_done()
    assert published(mqtt_mock, "control") == [example("control", 3), example("control", 4)]


async def test_settings_survive_a_restart_of_home_assistant(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> None:
    mock_restore_cache_with_extra_data(  # (one call: each replaces the cache)
        hass,
        [
            (State(WAKE_WORD, "hey_jarvis"), {}),
            (
                State(VOLUME, "40"),
                {
                    "native_value": 40.0,
                    "native_min_value": 0.0,
                    "native_max_value": 100.0,
                    "native_step": 1.0,
                    "native_unit_of_measurement": "%",
                },
            ),
        ],
    )
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    fire(hass, "status", "online")
    await hass.async_block_till_done()
    assert _state(hass, WAKE_WORD).state == "hey_jarvis"
    assert published(mqtt_mock, "control") == [example("control", 3), example("control", 4)]
    assert float(_state(hass, VOLUME).state) == 40


def test_control_golden_examples_are_what_the_entities_send() -> None:
    commands = [e["command"] for e in golden("control")["examples"]]
    assert commands == ["mute", "unmute", "stop", "volume", "wake_words"]
