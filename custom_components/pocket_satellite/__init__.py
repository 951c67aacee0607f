"""Pocket Satellite: an offline voice satellite, over MQTT."""

from __future__ import annotations

import json

from homeassistant.components import mqtt
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryError, ConfigEntryNotReady
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.typing import ConfigType

from .const import (
    COMPONENT_TOPIC,
    CONF_BASE_TOPIC,
    CONF_INFO,
    CONF_SATELLITE_ID,
    DEFAULT_BASE_TOPIC,
    DOMAIN,
)
from .device import PocketSatellite
from .info_keeper import InfoKeeper
from .intents import IntentBridge, SlotsPublisher
from .messages import MessageError, SatelliteInfo
from .models import PocketConfigEntry, RuntimeData
from .services import async_setup_services

PLATFORMS = [
    Platform.ASSIST_SATELLITE,
    Platform.BINARY_SENSOR,
    Platform.BUTTON,
    Platform.EVENT,
    Platform.NUMBER,
    Platform.SELECT,
    Platform.SENSOR,
    Platform.SWITCH,
    Platform.TTS,
]

CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the integration's actions."""
    async_setup_services(hass)
    return True


async def async_setup_entry(hass: HomeAssistant, entry: PocketConfigEntry) -> bool:
    """Subscribe to the satellite and set up its entities."""
    if not await mqtt.async_wait_for_mqtt_client(hass):
        raise ConfigEntryNotReady(translation_domain=DOMAIN, translation_key="mqtt_not_connected")
    try:
        info = SatelliteInfo.parse(dict(entry.data[CONF_INFO]))
    except (MessageError, KeyError, TypeError, ValueError) as err:
        # Retrying cannot mend stored data: the user must remove and add the satellite.
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="invalid_stored_info",
            translation_placeholders={"error": str(err)},
        ) from err
    satellite = PocketSatellite(
        hass,
        entry.data[CONF_SATELLITE_ID],
        entry.data.get(CONF_BASE_TOPIC, DEFAULT_BASE_TOPIC),
        info,
    )
    bridge = IntentBridge(hass, satellite)
    satellite.intent_handler = bridge.async_handle
    await satellite.async_start()
    entry.async_on_unload(satellite.async_stop)
    entry.runtime_data = RuntimeData(satellite)
    entry.async_on_unload(InfoKeeper(hass, entry, satellite).async_start())
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    entry.async_on_unload(SlotsPublisher(hass, satellite).async_start())
    # Retained: the satellite stops announcing its own MQTT discovery entities.
    await mqtt.async_publish(
        hass, satellite.topic(COMPONENT_TOPIC), json.dumps({"configured": True}), 1, True
    )
    return True


async def async_remove_entry(hass: HomeAssistant, entry: PocketConfigEntry) -> None:
    """Clear the retained ``component`` message: the satellite's discovery returns."""
    if not await mqtt.async_wait_for_mqtt_client(hass):
        return
    base = entry.data.get(CONF_BASE_TOPIC, DEFAULT_BASE_TOPIC)
    topic = f"{base}/{entry.data[CONF_SATELLITE_ID]}/{COMPONENT_TOPIC}"
    await mqtt.async_publish(hass, topic, "", 1, True)


async def async_unload_entry(hass: HomeAssistant, entry: PocketConfigEntry) -> bool:
    """Unload the entities; the subscriptions go with the entry's unload callbacks."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)
