"""Event entities: intents and alerts, for automations."""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.components.event import EventEntity, EventEntityDescription
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import ALERT_RUSHED_SPEECH
from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class PocketEventDescription(EventEntityDescription):
    """An event entity and the message kind it follows."""

    kind: str


INTENT_EVENT = PocketEventDescription(
    key="intent", translation_key="intent", event_types=["intent"], kind="intent"
)
ALERT_EVENT = PocketEventDescription(
    key="alert",
    translation_key="alert",
    event_types=[ALERT_RUSHED_SPEECH, "cleared", "help", "other"],
    kind="alert",
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the event entities."""
    satellite = entry.runtime_data.satellite
    async_add_entities([PocketEvent(satellite, INTENT_EVENT), PocketEvent(satellite, ALERT_EVENT)])


class PocketEvent(PocketSatelliteEntity, EventEntity):
    """Fires when the satellite publishes an intent or an alert."""

    entity_description: PocketEventDescription

    def __init__(self, satellite: PocketSatellite, description: PocketEventDescription) -> None:
        super().__init__(satellite, description)
        self.listen_to = (description.kind,)

    async def async_added_to_hass(self) -> None:
        """Follow this entity's messages (one handler per kind)."""
        await super().async_added_to_hass()
        if self.entity_description.kind == "alert":
            self.async_on_remove(self.satellite.add_listener("alert_cleared", self._handle_cleared))
            self.async_on_remove(self.satellite.add_listener("help", self._handle_help))

    @callback
    def _handle_push(self) -> None:
        if self.entity_description.kind == "intent":
            intent = self.satellite.last_intent
            assert intent is not None
            self._trigger_event(
                "intent",
                {
                    "intent": intent.intent,
                    "slots": intent.slots,
                    "confidence": intent.confidence,
                    "source": intent.source,
                    "utterance_id": intent.utterance_id,
                },
            )
        else:
            alert = self.satellite.last_alert
            assert alert is not None
            kind = alert.kind if alert.kind == ALERT_RUSHED_SPEECH else "other"
            self._trigger_event(
                kind,
                {
                    "kind": alert.kind,
                    "ratio": alert.ratio,
                    "severity": alert.severity,
                    "utterance_id": alert.utterance_id,
                    "id": alert.id,
                    "time": alert.time,
                },
            )
        self.async_write_ha_state()

    @callback
    def _handle_help(self) -> None:
        help_request = self.satellite.last_help
        assert help_request is not None
        self._trigger_event(
            "help",
            {
                "severity": help_request.severity,
                "utterance_id": help_request.utterance_id,
                "id": help_request.id,
                "time": help_request.time,
            },
        )
        self.async_write_ha_state()

    @callback
    def _handle_cleared(self) -> None:
        cleared = self.satellite.last_alert_cleared
        assert cleared is not None
        self._trigger_event(
            "cleared", {"kind": cleared.kind, "duration_seconds": cleared.duration_seconds}
        )
        self.async_write_ha_state()
