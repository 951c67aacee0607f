"""The Assist satellite entity: mirrors the satellite's state and announces."""

from __future__ import annotations

import logging

from homeassistant.components.assist_pipeline import PipelineEvent
from homeassistant.components.assist_satellite import (
    AssistSatelliteAnnouncement,
    AssistSatelliteConfiguration,
    AssistSatelliteEntity,
    AssistSatelliteEntityDescription,
    AssistSatelliteEntityFeature,
    AssistSatelliteWakeWord,
)
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import SAY_TIMEOUT_SECONDS
from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

_LOGGER = logging.getLogger(__name__)
PARALLEL_UPDATES = 0

SATELLITE = AssistSatelliteEntityDescription(key="assist_satellite", name=None)
#: The satellite's states as Assist knows them ("muted" is idle with an attribute).
STATE_MAP = {
    "idle": AssistSatelliteState.IDLE,
    "listening": AssistSatelliteState.LISTENING,
    "processing": AssistSatelliteState.PROCESSING,
    "responding": AssistSatelliteState.RESPONDING,
    "muted": AssistSatelliteState.IDLE,
}


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the satellite entity."""
    async_add_entities([PocketAssistSatellite(entry.runtime_data.satellite)])


class PocketAssistSatellite(PocketSatelliteEntity, AssistSatelliteEntity):
    """The satellite hears, understands and speaks on the device; HA mirrors it."""

    _attr_supported_features = AssistSatelliteEntityFeature.ANNOUNCE
    listen_to = ("state",)

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, SATELLITE)

    @callback
    def _handle_push(self) -> None:
        self._attr_extra_state_attributes = {"muted": self.satellite.state == "muted"}
        self._set_state(STATE_MAP[self.satellite.state])

    @callback
    def async_get_configuration(self) -> AssistSatelliteConfiguration:
        """The satellite's wake words (all of them active)."""
        info = self.satellite.info
        words = [
            AssistSatelliteWakeWord(
                id=w, wake_word=w.replace("_", " "), trained_languages=[info.language]
            )
            for w in info.wake_words
        ]
        return AssistSatelliteConfiguration(
            available_wake_words=words,
            active_wake_words=list(info.wake_words),
            max_active_wake_words=len(words),
        )

    async def async_set_configuration(self, config: AssistSatelliteConfiguration) -> None:
        """Wake words are chosen in the satellite's own configuration file."""
        raise HomeAssistantError(
            "Pocket Satellite wake words are set in its satellite.yaml (frontend.wake.models)"
        )

    def on_pipeline_event(self, event: PipelineEvent) -> None:
        """Not used: the satellite runs its own pipeline on the device."""

    async def async_announce(self, announcement: AssistSatelliteAnnouncement) -> None:
        """Speak the message on the satellite; return when it is done or timed out."""
        if not announcement.message:
            raise HomeAssistantError("Pocket Satellite can only announce text (a message)")
        done = await self.satellite.async_say(announcement.message, SAY_TIMEOUT_SECONDS)
        if done is None:
            _LOGGER.warning(
                "%s did not confirm the announcement within %s s",
                self.entity_id,
                SAY_TIMEOUT_SECONDS,
            )
        elif done.status == "error":
            raise HomeAssistantError(f"The satellite could not announce: {done.error}")
