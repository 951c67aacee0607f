"""Quality-scale rules: availability is logged once each way, the broker link counts,
slots wait for HA to start, every entity has an icon and every error a translation."""

from __future__ import annotations

import json
import logging
import re
from unittest.mock import MagicMock

import pytest
from homeassistant.components import mqtt
from homeassistant.const import STATE_UNAVAILABLE
from homeassistant.core import CoreState, HomeAssistant
from homeassistant.helpers.dispatcher import async_dispatcher_send
from pytest_homeassistant_custom_component.common import MockConfigEntry

from .conftest import REPO, fire, published

COMPONENT = REPO / "custom_components" / "pocket_satellite"
RATE = "sensor.kitchen_speech_rate"
#: An error raised with a translation (entity descriptions have translation keys too).
RAISED = re.compile(r'translation_domain=DOMAIN,\s*translation_key="([^"]+)"')


def _unavailability_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("custom_components.pocket_satellite")
        and ("unavailable" in r.getMessage() or "back online" in r.getMessage())
    ]


async def test_unavailable_and_back_are_logged_once_each(
    hass: HomeAssistant, setup_entry: MockConfigEntry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    for _ in range(3):
        fire(hass, "status", "offline")
        await hass.async_block_till_done()
    assert hass.states.get(RATE).state == STATE_UNAVAILABLE  # type: ignore[union-attr]
    for _ in range(3):
        fire(hass, "status", "online")
        await hass.async_block_till_done()
    assert _unavailability_lines(caplog) == [
        "Pocket Satellite kitchen is unavailable: its status is offline",
        "Pocket Satellite kitchen is back online",
    ]


async def test_losing_the_broker_makes_the_entities_unavailable(
    hass: HomeAssistant, setup_entry: MockConfigEntry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async_dispatcher_send(hass, mqtt.MQTT_CONNECTION_STATE, False)
    await hass.async_block_till_done()
    assert hass.states.get(RATE).state == STATE_UNAVAILABLE  # type: ignore[union-attr]
    async_dispatcher_send(hass, mqtt.MQTT_CONNECTION_STATE, True)
    await hass.async_block_till_done()
    assert hass.states.get(RATE).state != STATE_UNAVAILABLE  # type: ignore[union-attr]
    assert _unavailability_lines(caplog) == [
        "Pocket Satellite kitchen is unavailable: Home Assistant lost the MQTT broker",
        "Pocket Satellite kitchen is back online",
    ]


async def test_slots_are_published_once_ha_has_started(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> None:
    hass.set_state(CoreState.starting)
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert published(mqtt_mock, "slots") == []  # other integrations' entities may be missing
    await hass.async_start()
    await hass.async_block_till_done()
    assert len(published(mqtt_mock, "slots")) == 1


async def test_reload_after_start_logs_no_error(
    hass: HomeAssistant, setup_entry: MockConfigEntry, caplog: pytest.LogCaptureFixture
) -> None:
    assert await hass.config_entries.async_reload(setup_entry.entry_id)
    await hass.async_block_till_done()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


def _keys(tree: dict[str, dict[str, object]]) -> set[tuple[str, str]]:
    return {(platform, key) for platform, keys in tree.items() for key in keys}


def test_every_translated_entity_has_an_icon() -> None:
    strings = json.loads((COMPONENT / "strings.json").read_text(encoding="utf-8"))
    icons = json.loads((COMPONENT / "icons.json").read_text(encoding="utf-8"))
    # Entities with a device class take its icon (connected, tts's own).
    wanted = _keys(strings["entity"]) - {("binary_sensor", "connected"), ("tts", "tts")}
    assert wanted <= _keys(icons["entity"])
    assert _keys(icons["entity"]) <= _keys(strings["entity"])


def test_every_raised_translation_key_is_translated() -> None:
    strings = json.loads((COMPONENT / "strings.json").read_text(encoding="utf-8"))
    english = json.loads((COMPONENT / "translations" / "en.json").read_text(encoding="utf-8"))
    assert strings == english
    raised = {
        key
        for module in COMPONENT.glob("*.py")
        for key in RAISED.findall(module.read_text(encoding="utf-8"))
    }
    assert raised, "no translated errors found"
    assert raised <= set(strings["exceptions"])
