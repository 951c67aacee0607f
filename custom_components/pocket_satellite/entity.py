"""The base entity of every Pocket Satellite platform."""

from __future__ import annotations

from homeassistant.core import callback
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import Entity, EntityDescription

from .const import DOMAIN
from .device import PocketSatellite


class PocketSatelliteEntity(Entity):
    """Pushed by the satellite's MQTT messages; unavailable while it is offline."""

    _attr_has_entity_name = True
    _attr_should_poll = False
    #: Listener kinds (see device.KINDS) that change this entity.
    listen_to: tuple[str, ...] = ()

    def __init__(self, satellite: PocketSatellite, description: EntityDescription) -> None:
        self.satellite = satellite
        self.entity_description = description
        self._attr_unique_id = f"{satellite.satellite_id}-{description.key}"
        info = satellite.info
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, satellite.satellite_id)},
            name=info.name,
            manufacturer="Pocket Satellite",
            model="Pocket Satellite",
            sw_version=info.version,
        )

    @property
    def available(self) -> bool:
        """Available while the satellite's status is ``online``."""
        return self.satellite.available

    async def async_added_to_hass(self) -> None:
        """Follow the satellite's status and this entity's messages."""
        await super().async_added_to_hass()
        self.async_on_remove(self.satellite.add_listener("status", self._handle_status))
        for kind in self.listen_to:
            self.async_on_remove(self.satellite.add_listener(kind, self._handle_push))

    @callback
    def _handle_status(self) -> None:
        """The satellite went online or offline."""
        self.async_write_ha_state()

    @callback
    def _handle_push(self) -> None:
        """A message arrived: update and write the state."""
        self.async_write_ha_state()
