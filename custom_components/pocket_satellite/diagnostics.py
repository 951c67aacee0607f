"""Diagnostics of one satellite, with what was said and what HA exposes redacted.

The MQTT broker's settings belong to the mqtt integration's own diagnostics; they are
not repeated here.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from .models import PocketConfigEntry

#: Spoken content (``text``, ``slots``) and the names HA exposes (``names``, ``areas``).
TO_REDACT = {"text", "slots", "names", "areas"}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: PocketConfigEntry
) -> dict[str, Any]:
    """The entry and the satellite's latest messages."""
    return async_redact_data(
        {
            "entry": dict(entry.data),
            "satellite": entry.runtime_data.satellite.diagnostics(),
        },
        TO_REDACT,
    )
