"""Which alerts Home Assistant has fired, kept across reloads and restarts.

HA's MQTT client has a clean session: a ``help`` published while HA was down never
reaches it. The satellite therefore keeps every help request and rushed-speech alert
open, retained on ``alert/active``, until HA acknowledges it on ``alert/ack``. HA fires
each alert's event once, wherever it first saw it (``help``, ``alert`` or
``alert/active``), remembers its id here (HA's storage) and then acknowledges it; an
alert it sees again is only acknowledged again, never fired twice.
"""

from __future__ import annotations

from collections import deque
from typing import Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from .const import DOMAIN, FIRED_ALERT_IDS

STORAGE_VERSION: Final = 1


class FiredAlerts:
    """The ids of the last FIRED_ALERT_IDS alerts fired for one satellite."""

    def __init__(self, hass: HomeAssistant, satellite_id: str) -> None:
        self._store: Store[list[str]] = Store(
            hass, STORAGE_VERSION, f"{DOMAIN}.{satellite_id}.fired_alerts"
        )
        self._ids: deque[str] = deque(maxlen=FIRED_ALERT_IDS)

    async def async_load(self) -> None:
        """Read the ids fired before (nothing on a first start or unreadable data)."""
        stored = await self._store.async_load()
        if isinstance(stored, list):
            self._ids.extend(i for i in stored if isinstance(i, str))

    def __contains__(self, alert_id: object) -> bool:
        return alert_id in self._ids

    def add(self, alert_id: str) -> None:
        """Remember a fired alert (saved by ``async_save``)."""
        self._ids.append(alert_id)

    async def async_save(self) -> None:
        """Write the ids to storage."""
        await self._store.async_save(list(self._ids))
