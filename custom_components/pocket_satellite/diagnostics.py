"""Diagnostics with credentials and spoken content redacted."""

from __future__ import annotations

from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.const import CONF_PASSWORD, CONF_USERNAME
from homeassistant.core import HomeAssistant

from .models import PocketConfigEntry

TO_REDACT = {CONF_PASSWORD, CONF_USERNAME, "client_key", "certificate", "text", "slots"}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: PocketConfigEntry
) -> dict[str, Any]:
    """The entry, the satellite's latest messages and the MQTT broker settings."""
    mqtt_entries = hass.config_entries.async_entries("mqtt")
    broker = dict(mqtt_entries[0].data) if mqtt_entries else {}
    return async_redact_data(
        {
            "entry": dict(entry.data),
            "satellite": entry.runtime_data.satellite.diagnostics(),
            "mqtt_broker": broker,
        },
        TO_REDACT,
    )
