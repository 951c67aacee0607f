"""Binary sensors: rushed speech (from alerts) and the satellite's connection."""

from __future__ import annotations

from homeassistant.components.binary_sensor import (
    BinarySensorDeviceClass,
    BinarySensorEntity,
    BinarySensorEntityDescription,
)
from homeassistant.const import EntityCategory
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.event import async_call_later

from .const import ALERT_RUSHED_SPEECH, RUSHED_SPEECH_HOLD_SECONDS
from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0

RUSHED_SPEECH = BinarySensorEntityDescription(key="rushed_speech", translation_key="rushed_speech")
CONNECTED = BinarySensorEntityDescription(
    key="connected",
    translation_key="connected",
    device_class=BinarySensorDeviceClass.CONNECTIVITY,
    entity_category=EntityCategory.DIAGNOSTIC,
    # Every other entity is unavailable while the satellite is offline.
    entity_registry_enabled_default=False,
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the binary sensors."""
    satellite = entry.runtime_data.satellite
    async_add_entities([RushedSpeechSensor(satellite), ConnectedSensor(satellite)])


class RushedSpeechSensor(PocketSatelliteEntity, BinarySensorEntity):
    """On at a rushed-speech alert; off when the satellite clears it, or after a while."""

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, RUSHED_SPEECH)
        self._attr_is_on = False
        self._cancel_hold: CALLBACK_TYPE | None = None

    async def async_added_to_hass(self) -> None:
        """Follow alerts and their clearing."""
        await super().async_added_to_hass()
        self.async_on_remove(self.satellite.add_listener("alert", self._on_alert))
        self.async_on_remove(self.satellite.add_listener("alert_cleared", self._on_cleared))
        self.async_on_remove(self._stop_hold)

    @callback
    def _on_alert(self) -> None:
        alert = self.satellite.last_alert
        if alert is None or alert.kind != ALERT_RUSHED_SPEECH:
            return
        self._attr_is_on = True
        self._attr_extra_state_attributes = {"ratio": alert.ratio, "severity": alert.severity}
        self._stop_hold()
        self._cancel_hold = async_call_later(self.hass, RUSHED_SPEECH_HOLD_SECONDS, self._hold_over)
        self.async_write_ha_state()

    @callback
    def _on_cleared(self) -> None:
        cleared = self.satellite.last_alert_cleared
        if cleared is not None and cleared.kind == ALERT_RUSHED_SPEECH:
            self._turn_off()

    @callback
    def _hold_over(self, _now: object) -> None:
        self._cancel_hold = None
        self._turn_off()

    def _turn_off(self) -> None:
        self._attr_is_on = False
        self._stop_hold()
        self.async_write_ha_state()

    def _stop_hold(self) -> None:
        if self._cancel_hold is not None:
            self._cancel_hold()
            self._cancel_hold = None


class ConnectedSensor(PocketSatelliteEntity, BinarySensorEntity):
    """Whether the satellite is online (its MQTT status and last will)."""

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, CONNECTED)

    @property
    def available(self) -> bool:
        """Always available: it reports the connection itself."""
        return True

    @property
    def is_on(self) -> bool:
        """True while the satellite says ``online``."""
        return self.satellite.available
