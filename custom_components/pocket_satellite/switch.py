"""The mute switch: the satellite's microphone off (``control`` mute / unmute)."""

from __future__ import annotations

from typing import Any

from homeassistant.components.switch import SwitchEntity, SwitchEntityDescription
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0

MUTE = SwitchEntityDescription(key="mute", translation_key="mute")


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the mute switch."""
    async_add_entities([MuteSwitch(entry.runtime_data.satellite)])


class MuteSwitch(PocketSatelliteEntity, SwitchEntity):
    """On while the satellite says it is muted (its retained ``state``)."""

    listen_to = ("state",)

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, MUTE)

    @property
    def is_on(self) -> bool:
        """The satellite's own word: its state is ``muted``."""
        return self.satellite.controls.muted

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Mute: the satellite stops listening until unmuted."""
        await self.satellite.controls.async_set_muted(True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Unmute."""
        await self.satellite.controls.async_set_muted(False)
