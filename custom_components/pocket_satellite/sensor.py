"""Sensors: what the satellite is doing, speech rate, the last intent and enrolment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.restore_state import RestoreEntity
from homeassistant.helpers.typing import StateType

from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .messages import ENROLMENT_STATES, STATES, EnrolmentMessage, MessageError
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class PocketSensorDescription(SensorEntityDescription):
    """A sensor, where its value comes from and which messages change it."""

    value_fn: Callable[[PocketSatellite], StateType]
    listen_to: tuple[str, ...]
    attrs_fn: Callable[[PocketSatellite], dict[str, Any] | None] = lambda _: None


#: Enrolment states that end one: kept over a restart of Home Assistant.
ENROLMENT_ENDED = ("done", "failed", "cancelled")

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
    PocketSensorDescription(
        key="enrolment",
        translation_key="enrolment",
        device_class=SensorDeviceClass.ENUM,
        options=list(ENROLMENT_STATES),
        value_fn=lambda s: None if s.last_enrolment is None else s.last_enrolment.state,
        attrs_fn=lambda s: None if s.last_enrolment is None else vars(s.last_enrolment),
        listen_to=("enrolment",),
    ),
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the sensors."""
    satellite = entry.runtime_data.satellite
    async_add_entities(
        (PocketEnrolmentSensor if description.key == "enrolment" else PocketSensor)(
            satellite, description
        )
        for description in SENSORS
    )


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

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        """What goes with it (an enrolment's speaker, prompt, sentence, error)."""
        return self.entity_description.attrs_fn(self.satellite)


class PocketEnrolmentSensor(PocketSensor, RestoreEntity):
    """The last enrolment, kept over a restart of Home Assistant: the satellite sends
    each of its steps once (not retained), so after a restart the sensor would be
    unknown until the next enrolment. An ended one is restored (done, failed,
    cancelled); one under way is not: it may have ended while Home Assistant was down,
    and its next step comes with its next prompt."""

    async def async_added_to_hass(self) -> None:
        """Restore the last ended enrolment, unless the satellite has sent one since."""
        await super().async_added_to_hass()
        last = await self.async_get_last_state()
        if self.satellite.last_enrolment is not None or last is None:
            return
        if last.state not in ENROLMENT_ENDED:
            return
        try:
            restored = EnrolmentMessage.parse({**last.attributes, "state": last.state})
        except MessageError:
            return  # (stored by another version: left unknown)
        self.satellite.last_enrolment = restored
