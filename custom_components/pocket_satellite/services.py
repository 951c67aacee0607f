"""The integration's actions: clear a help request."""

from __future__ import annotations

import voluptuous as vol
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_DEVICE_ID
from homeassistant.core import HomeAssistant, ServiceCall, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import device_registry as dr

from .const import DOMAIN, SERVICE_CLEAR_HELP
from .models import PocketConfigEntry

CLEAR_HELP_SCHEMA = vol.Schema({vol.Optional(ATTR_DEVICE_ID): vol.All(cv.ensure_list, [cv.string])})


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the actions (once, when the integration loads)."""

    @callback
    def clear_help(call: ServiceCall) -> None:
        """Clear the help request of the given satellites (every one without a device)."""
        wanted: list[str] | None = call.data.get(ATTR_DEVICE_ID)
        registry = dr.async_get(hass)
        entries: list[PocketConfigEntry] = [
            entry
            for entry in hass.config_entries.async_entries(DOMAIN)
            if entry.state is ConfigEntryState.LOADED
        ]
        by_device: dict[str, PocketConfigEntry] = {}
        for entry in entries:
            for device in dr.async_entries_for_config_entry(registry, entry.entry_id):
                by_device[device.id] = entry
        unknown = [d for d in wanted or () if d not in by_device]
        if unknown:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="not_a_satellite",
                translation_placeholders={"device_id": ", ".join(unknown)},
            )
        targets = entries if wanted is None else [by_device[d] for d in wanted]
        for entry in targets:
            entry.runtime_data.satellite.clear_help()

    hass.services.async_register(DOMAIN, SERVICE_CLEAR_HELP, clear_help, CLEAR_HELP_SCHEMA)
