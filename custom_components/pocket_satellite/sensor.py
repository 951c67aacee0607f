"""Sensors: what the satellite is doing, speech rate and the last intent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.typing import StateType

from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .messages import STATES
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class PocketSensorDescription(SensorEntityDescription):
    """A sensor, where its value comes from and which messages change it."""

    value_fn: Callable[[PocketSatellite], StateType]
    listen_to: tuple[str, ...]


SENSORS = (
    PocketSensorDescription(
        key="activity",
        translation_key="activity",
        device_class=SensorDeviceClass.ENUM,
        options=list(STATES),
        value_fn=lambda s: s.state,
        listen_to=("state",),
    ),
    PocketSensorDescription(
        key="speech_rate",
        translation_key="speech_rate",
        native_unit_of_measurement="syl/s",
        state_class=SensorStateClass.MEASUREMENT,
        suggested_display_precision=1,
        value_fn=lambda s: None if s.last_prosody is None else s.last_prosody.syllables_per_second,
        listen_to=("prosody",),
    ),
    PocketSensorDescription(
        key="last_intent",
        translation_key="last_intent",
        # The intent event entity carries the same, with its slots.
        entity_registry_enabled_default=False,
        value_fn=lambda s: None if s.last_intent is None else s.last_intent.intent,
        listen_to=("intent",),
    ),
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the sensors."""
    satellite = entry.runtime_data.satellite
    async_add_entities(PocketSensor(satellite, description) for description in SENSORS)


class PocketSensor(PocketSatelliteEntity, SensorEntity):
    """A value the satellite pushes."""

    entity_description: PocketSensorDescription

    def __init__(self, satellite: PocketSatellite, description: PocketSensorDescription) -> None:
        super().__init__(satellite, description)
        self.listen_to = description.listen_to

    @property
    def native_value(self) -> StateType:
        """The latest value."""
        return self.entity_description.value_fn(self.satellite)
