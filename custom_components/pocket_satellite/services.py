"""The integration's actions: clear a help request; learn a voice by voice, or cancel it."""

from __future__ import annotations

import voluptuous as vol
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_DEVICE_ID
from homeassistant.core import HomeAssistant, ServiceCall, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import device_registry as dr

from .const import DOMAIN, SERVICE_CANCEL_ENROL, SERVICE_CLEAR_HELP, SERVICE_ENROL
from .models import PocketConfigEntry

CLEAR_HELP_SCHEMA = vol.Schema({vol.Optional(ATTR_DEVICE_ID): vol.All(cv.ensure_list, [cv.string])})
#: A speaker's name (the satellite's ``stt.speaker``: it names a folder).
SPEAKER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"
ENROL_SCHEMA = vol.Schema(
    {
        vol.Required(ATTR_DEVICE_ID): cv.string,
        vol.Required("speaker"): vol.All(cv.string, vol.Match(SPEAKER_NAME)),
        vol.Optional("prompts"): vol.All(vol.Coerce(int), vol.Range(min=5, max=20)),
    }
)
CANCEL_ENROL_SCHEMA = vol.Schema({vol.Required(ATTR_DEVICE_ID): cv.string})


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the actions (once, when the integration loads)."""

    def loaded() -> list[PocketConfigEntry]:
        return [
            entry
            for entry in hass.config_entries.async_entries(DOMAIN)
            if entry.state is ConfigEntryState.LOADED
        ]

    def by_device(wanted: list[str]) -> list[PocketConfigEntry]:
        """The satellites of the devices ``wanted``; an unknown one is refused."""
        registry = dr.async_get(hass)
        found: dict[str, PocketConfigEntry] = {}
        for entry in loaded():
            for device in dr.async_entries_for_config_entry(registry, entry.entry_id):
                found[device.id] = entry
        unknown = [d for d in wanted if d not in found]
        if unknown:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="not_a_satellite",
                translation_placeholders={"device_id": ", ".join(unknown)},
            )
        return [found[d] for d in wanted]

    @callback
    def clear_help(call: ServiceCall) -> None:
        """Clear the help request of the given satellites (every one without a device)."""
        wanted: list[str] | None = call.data.get(ATTR_DEVICE_ID)
        for entry in loaded() if wanted is None else by_device(wanted):
            entry.runtime_data.satellite.clear_help()

    async def enrol(call: ServiceCall) -> None:
        """Start learning a speaker's voice on one satellite."""
        (entry,) = by_device([call.data[ATTR_DEVICE_ID]])
        satellite = entry.runtime_data.satellite
        await satellite.async_enrol(call.data["speaker"], call.data.get("prompts"))

    async def cancel_enrol(call: ServiceCall) -> None:
        """Cancel the enrolment under way on one satellite."""
        (entry,) = by_device([call.data[ATTR_DEVICE_ID]])
        await entry.runtime_data.satellite.async_enrol(None, None)

    hass.services.async_register(DOMAIN, SERVICE_CLEAR_HELP, clear_help, CLEAR_HELP_SCHEMA)
    hass.services.async_register(DOMAIN, SERVICE_ENROL, enrol, ENROL_SCHEMA)
    hass.services.async_register(DOMAIN, SERVICE_CANCEL_ENROL, cancel_enrol, CANCEL_ENROL_SCHEMA)
