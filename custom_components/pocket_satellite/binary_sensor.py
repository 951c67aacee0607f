"""Binary sensors: help requested, rushed speech (from alerts) and the connection."""

from __future__ import annotations

from homeassistant.components.binary_sensor import (
    BinarySensorDeviceClass,
    BinarySensorEntity,
    BinarySensorEntityDescription,
)
from homeassistant.const import STATE_ON, EntityCategory
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.event import async_call_later
from homeassistant.helpers.restore_state import RestoreEntity

from .const import ALERT_RUSHED_SPEECH, RUSHED_SPEECH_HOLD_SECONDS
from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0

RUSHED_SPEECH = BinarySensorEntityDescription(key="rushed_speech", translation_key="rushed_speech")
HELP_REQUESTED = BinarySensorEntityDescription(
    key="help_requested",
    translation_key="help_requested",
    device_class=BinarySensorDeviceClass.PROBLEM,
)
#: The help request's fields the help sensor shows (the latest one while it is on).
HELP_ATTRIBUTES = ("id", "time", "severity", "utterance_id")
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
    async_add_entities(
        [HelpRequestedSensor(satellite), RushedSpeechSensor(satellite), ConnectedSensor(satellite)]
    )


class HelpRequestedSensor(PocketSatelliteEntity, BinarySensorEntity, RestoreEntity):
    """On when someone asked for help; stays on (also across restarts) until someone
    clears it with the "clear help request" button or action."""

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, HELP_REQUESTED)
        self._attr_is_on = False

    async def async_added_to_hass(self) -> None:
        """Restore the state: a help request nobody cleared is still open."""
        await super().async_added_to_hass()
        self.async_on_remove(self.satellite.add_listener("help", self._on_help))
        self.async_on_remove(self.satellite.add_listener("help_cleared", self._on_cleared))
        last = await self.async_get_last_state()
        if last is not None and last.state == STATE_ON and not self._attr_is_on:
            self._attr_is_on = True
            self._attr_extra_state_attributes = {
                key: last.attributes[key] for key in HELP_ATTRIBUTES if key in last.attributes
            }

    @property
    def available(self) -> bool:
        """Always available: an open help request matters while the satellite is away."""
        return True

    @callback
    def _on_help(self) -> None:
        help_request = self.satellite.last_help
        assert help_request is not None
        self._attr_is_on = True
        self._attr_extra_state_attributes = {
            key: getattr(help_request, key) for key in HELP_ATTRIBUTES
        }
        self.async_write_ha_state()

    @callback
    def _on_cleared(self) -> None:
        self._attr_is_on = False
        self._attr_extra_state_attributes = {}
        self.async_write_ha_state()


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
