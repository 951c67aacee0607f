"""HA intents run through HA's intent machinery; slots and diagnostics."""

from __future__ import annotations

from datetime import timedelta
from unittest.mock import MagicMock

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from .conftest import example, fire, golden, published


@pytest.fixture
async def kitchen_light(hass: HomeAssistant) -> str:
    """A real light entity (the demo platform) named Kitchen Lights, off."""
    assert await async_setup_component(hass, "intent", {})
    assert await async_setup_component(hass, "light", {"light": [{"platform": "demo"}]})
    await hass.async_block_till_done()
    await hass.services.async_call(
        "light", "turn_off", {"entity_id": "light.kitchen_lights"}, blocking=True
    )
    state = hass.states.get("light.kitchen_lights")
    assert state is not None and state.state == "off"
    return "light.kitchen_lights"


async def test_hass_turn_on_turns_on_a_real_light_and_answers(
    hass: HomeAssistant, kitchen_light: str, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    fire(hass, "intent", example("intent", 0))  # HassTurnOn, name: Kitchen Lights
    await hass.async_block_till_done()
    state = hass.states.get(kitchen_light)
    assert state is not None and state.state == "on"
    (response,) = published(mqtt_mock, "response")
    assert response["utterance_id"] == "u1"
    assert "Kitchen Lights" in response["text"]
    assert set(response) == set(golden("response")["examples"][0])


async def test_a_failing_ha_intent_answers_sorry(
    hass: HomeAssistant, kitchen_light: str, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    intent = {**example("intent", 0), "id": "x1", "slots": {"name": "No Such Thing"}}
    fire(hass, "intent", intent)
    await hass.async_block_till_done()
    (response,) = published(mqtt_mock, "response")
    assert response == {"utterance_id": "u1", "text": "Sorry, I couldn't do that."}


async def test_slots_list_exposed_names_and_areas(
    hass: HomeAssistant,
    kitchen_light: str,
    config_entry: MockConfigEntry,
    mqtt_mock: MagicMock,
    area_registry: ar.AreaRegistry,
) -> None:
    area_registry.async_create("Kitchen")
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    slots = published(mqtt_mock, "slots")
    assert slots, "slots are published at setup"
    assert "Kitchen Lights" in slots[-1]["names"]
    assert slots[-1]["areas"] == ["Kitchen"]
    call = next(
        c
        for c in mqtt_mock.async_publish.call_args_list
        if c.args[0] == "pocket_satellite/kitchen/slots"
    )
    assert call.args[3] is True  # retained
    # A new area is published after the cool-down; an unchanged list is not sent again.
    area_registry.async_create("Bedroom")
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=3))
    await hass.async_block_till_done()
    latest = published(mqtt_mock, "slots")
    assert latest[-1]["areas"] == ["Bedroom", "Kitchen"]
    hass.bus.async_fire(
        er.EVENT_ENTITY_REGISTRY_UPDATED,
        {"action": "update", "entity_id": kitchen_light, "changes": {}},
    )
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=6))
    await hass.async_block_till_done()
    assert len(published(mqtt_mock, "slots")) == len(latest)


async def test_diagnostics_leave_out_the_broker_and_redact_speech(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    setup_entry: MockConfigEntry,
) -> None:
    fire(hass, "intent", example("intent", 1))
    fire(hass, "metrics", example("metrics"))
    await hass.async_block_till_done()
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, setup_entry)
    assert set(diagnostics) == {"entry", "satellite"}
    # how the satellite is doing: its own counters and gauges (``metrics``)
    metrics = diagnostics["satellite"]["metrics"]
    assert metrics["counters"]["frames"] == example("metrics")["counters"]["frames"]
    assert metrics["gauges"]["rss_mb"] == example("metrics")["gauges"]["rss_mb"]
    assert "mock-broker" not in str(diagnostics)  # the MQTT entry's broker host
    assert diagnostics["satellite"]["available"] is True
    assert diagnostics["satellite"]["last_intent"]["intent"] == "CallNurse"
    assert diagnostics["satellite"]["last_intent"]["slots"] == "**REDACTED**"
    assert diagnostics["entry"]["satellite_id"] == "kitchen"
