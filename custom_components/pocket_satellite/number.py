"""The volume number: the satellite's output level (``control`` volume)."""

from __future__ import annotations

from homeassistant.components.number import (
    NumberEntityDescription,
    NumberMode,
    RestoreNumber,
)
from homeassistant.const import PERCENTAGE, EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0

VOLUME = NumberEntityDescription(
    key="volume",
    translation_key="volume",
    entity_category=EntityCategory.CONFIG,
    native_min_value=0,
    native_max_value=100,
    native_step=1,
    native_unit_of_measurement=PERCENTAGE,
    mode=NumberMode.SLIDER,
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the volume number."""
    async_add_entities([VolumeNumber(entry.runtime_data.satellite)])


class VolumeNumber(PocketSatelliteEntity, RestoreNumber):
    """The volume HA set (unknown until set; the satellite does not report its own).

    Restored after a restart of HA and sent again whenever the satellite comes back.
    """

    listen_to = ("settings",)

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, VOLUME)

    async def async_added_to_hass(self) -> None:
        """Take back the volume set before HA restarted."""
        await super().async_added_to_hass()
        last = await self.async_get_last_number_data()
        if last is not None and last.native_value is not None:
            self.satellite.controls.restore(volume=last.native_value / 100)

    @property
    def native_value(self) -> float | None:
        """Percent."""
        volume = self.satellite.controls.volume
        return None if volume is None else round(volume * 100)

    async def async_set_native_value(self, value: float) -> None:
        """Send the volume to the satellite."""
        await self.satellite.controls.async_set_volume(value / 100)
