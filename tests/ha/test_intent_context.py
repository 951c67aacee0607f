"""Intents run with the satellite's device, area and language; timers end on it."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from unittest.mock import MagicMock

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import intent
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.pocket_satellite.intents import speech

from .conftest import DOMAIN, INFO, example, fire, published

LIGHTS = ("light.kitchen_lights", "light.bed_light", "light.ceiling_lights")


@pytest.fixture
async def lights(hass: HomeAssistant) -> None:
    """The demo platform's real lights, all off."""
    assert await async_setup_component(hass, "intent", {})
    assert await async_setup_component(hass, "light", {"light": [{"platform": "demo"}]})
    await hass.async_block_till_done()
    await hass.services.async_call("light", "turn_off", {"entity_id": "all"}, blocking=True)


def _on(hass: HomeAssistant) -> list[str]:
    return [e for e in LIGHTS if (s := hass.states.get(e)) is not None and s.state == "on"]


async def _setup(hass: HomeAssistant, **info: object) -> MockConfigEntry:
    """The kitchen satellite, its info changed by ``info``, online."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        unique_id="kitchen",
        data={
            "satellite_id": "kitchen",
            "base_topic": "pocket_satellite",
            "info": {**INFO, **info},
        },
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    fire(hass, "status", "online")
    await hass.async_block_till_done()
    return entry


async def test_the_lights_means_the_satellites_area(
    hass: HomeAssistant,
    lights: None,
    mqtt_mock: MagicMock,
    area_registry: ar.AreaRegistry,
    entity_registry: er.EntityRegistry,
    device_registry: dr.DeviceRegistry,
) -> None:
    kitchen = area_registry.async_get_or_create("Kitchen")
    entity_registry.async_update_entity("light.kitchen_lights", area_id=kitchen.id)
    await _setup(hass)  # info.area: Kitchen (satellite.area in its satellite.yaml)
    device = device_registry.async_get_device(identifiers={(DOMAIN, "kitchen")})
    assert device is not None and device.area_id == kitchen.id
    lights_here = {**example("intent", 0), "id": "l1", "slots": {"domain": "light"}}
    fire(hass, "intent", lights_here)
    await hass.async_block_till_done()
    assert _on(hass) == ["light.kitchen_lights"]
    assert "Kitchen" in published(mqtt_mock, "response")[-1]["text"]


async def test_the_lights_from_a_satellite_without_an_area_does_nothing(
    hass: HomeAssistant,
    lights: None,
    mqtt_mock: MagicMock,
    area_registry: ar.AreaRegistry,
    entity_registry: er.EntityRegistry,
) -> None:
    kitchen = area_registry.async_get_or_create("Kitchen")
    entity_registry.async_update_entity("light.kitchen_lights", area_id=kitchen.id)
    await _setup(hass, area=None)
    fire(hass, "intent", {**example("intent", 0), "id": "l2", "slots": {"domain": "light"}})
    await hass.async_block_till_done()
    assert _on(hass) == []  # not every light in the house
    assert published(mqtt_mock, "response") == [
        {"utterance_id": "u1", "text": "Sorry, I couldn't do that."}
    ]


async def test_a_timer_set_on_the_satellite_is_spoken_there_when_it_ends(
    hass: HomeAssistant, lights: None, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    timer = {**example("intent", 0), "id": "t1", "intent": "HassStartTimer"}
    fire(hass, "intent", {**timer, "slots": {"minutes": "5", "name": "pasta"}})
    await hass.async_block_till_done()
    (answer,) = published(mqtt_mock, "response")
    assert answer["utterance_id"] == "u1"
    assert published(mqtt_mock, "say") == []
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=5, seconds=1))
    await hass.async_block_till_done()
    for _ in range(100):
        if published(mqtt_mock, "say"):
            break
        await asyncio.sleep(0)
    (say,) = published(mqtt_mock, "say")
    assert say["text"] == "Your pasta timer is done."
    fire(hass, "say/done", {"id": say["id"], "status": "done"})
    await hass.async_block_till_done()


@pytest.mark.parametrize(
    ("language", "sorry"),
    [("de", "Das konnte ich leider nicht tun."), ("en-GB", "Sorry, I couldn't do that.")],
)
async def test_replies_are_in_the_satellites_language(
    hass: HomeAssistant,
    lights: None,
    mqtt_mock: MagicMock,
    language: str,
    sorry: str,
) -> None:
    await _setup(hass, language=language)
    fire(hass, "intent", {**example("intent", 0), "slots": {"name": "No Such Thing"}})
    await hass.async_block_till_done()
    assert published(mqtt_mock, "response")[-1]["text"] == sorry


def test_speech_falls_back_to_phrases_in_the_language() -> None:
    response = intent.IntentResponse(language="fr")
    assert speech(response, "fr") == "C'est fait."
    assert speech(response, "xx") == "Done."
    response.async_set_speech("Il est 5 heures")
    assert speech(response, "fr") == "Il est 5 heures"
    failed = intent.IntentResponse(language="nl")
    failed.response_type = intent.IntentResponseType.ERROR
    assert speech(failed, "nl") == "Sorry, dat lukte niet."
