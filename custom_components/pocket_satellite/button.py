"""Buttons: clear the help request, and stop what the satellite is saying."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from homeassistant.components.button import ButtonEntity, ButtonEntityDescription
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0


async def _clear_help(satellite: PocketSatellite) -> None:
    satellite.clear_help()


async def _stop(satellite: PocketSatellite) -> None:
    await satellite.async_control("stop")


@dataclass(frozen=True, kw_only=True)
class PocketButtonDescription(ButtonEntityDescription):
    """A button and what pressing it does."""

    press: Callable[[PocketSatellite], Awaitable[None]]
    always_available: bool = False
    """Available while the satellite is offline too (it only changes HA's own state)."""


CLEAR_HELP = PocketButtonDescription(
    key="clear_help", translation_key="clear_help", press=_clear_help, always_available=True
)
STOP = PocketButtonDescription(key="stop", translation_key="stop", press=_stop)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the buttons."""
    satellite = entry.runtime_data.satellite
    async_add_entities([PocketButton(satellite, CLEAR_HELP), PocketButton(satellite, STOP)])


class PocketButton(PocketSatelliteEntity, ButtonEntity):
    """A button of the satellite."""

    entity_description: PocketButtonDescription

    @property
    def available(self) -> bool:
        """The satellite's status, unless the button works without it."""
        return self.entity_description.always_available or super().available

    async def async_press(self) -> None:
        """Do what the button is for."""
        await self.entity_description.press(self.satellite)
