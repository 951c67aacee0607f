"""Keeps what Home Assistant knows of a satellite current with its ``info``.

The device registry (name, software version), the entry's stored info (what setup uses
after a restart) and a repair issue while the satellite speaks a protocol version this
component does not.
"""

from __future__ import annotations

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import issue_registry as ir

from .const import CONF_INFO, DOMAIN, PROTOCOL_VERSION
from .device import PocketSatellite
from .messages import SatelliteInfo
from .models import PocketConfigEntry


class InfoKeeper:
    """Applies each ``info`` the satellite publishes."""

    def __init__(
        self, hass: HomeAssistant, entry: PocketConfigEntry, satellite: PocketSatellite
    ) -> None:
        self.hass = hass
        self.entry = entry
        self.satellite = satellite

    @callback
    def async_start(self) -> CALLBACK_TYPE:
        """Register the device and check the protocol now, then at every ``info``."""
        self._apply()
        return self.satellite.add_listener("info", self._apply)

    @property
    def issue_id(self) -> str:
        """The repair issue of this satellite's protocol."""
        return f"protocol_{self.satellite.satellite_id}"

    @callback
    def _apply(self) -> None:
        info = self.satellite.info
        device = dr.async_get(self.hass).async_get_or_create(
            config_entry_id=self.entry.entry_id,
            identifiers={(DOMAIN, self.satellite.satellite_id)},
            manufacturer="Pocket Satellite",
            model="Pocket Satellite",
            name=info.name,
            sw_version=info.version,
            # Where it stands (satellite.area): the area "turn on the lights" points at,
            # until the user sets another on the device page.
            suggested_area=info.area,
        )
        if (device.name, device.sw_version) != (info.name, info.version):
            dr.async_get(self.hass).async_update_device(
                device.id, name=info.name, sw_version=info.version
            )
        if self.entry.data.get(CONF_INFO) != info.as_dict():
            self.hass.config_entries.async_update_entry(
                self.entry, data={**self.entry.data, CONF_INFO: info.as_dict()}
            )
        self._check_protocol(info)

    def _check_protocol(self, info: SatelliteInfo) -> None:
        if info.protocol == PROTOCOL_VERSION:
            ir.async_delete_issue(self.hass, DOMAIN, self.issue_id)
            return
        newer = info.protocol > PROTOCOL_VERSION
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            self.issue_id,
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key="protocol_newer" if newer else "protocol_older",
            translation_placeholders={
                "name": info.name,
                "satellite_protocol": str(info.protocol),
                "protocol": str(PROTOCOL_VERSION),
            },
        )
