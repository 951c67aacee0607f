"""The Assist satellite entity: announcements and wake words.

Its state is Assist's own (``responding`` while HA announces through it): HA lets only
its own pipeline set it, and the satellite runs its pipeline on the device. What the
satellite is doing (listening, muted, ...) is the Activity sensor (sensor.py).
"""

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
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import DOMAIN, SAY_TIMEOUT_SECONDS
from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

_LOGGER = logging.getLogger(__name__)
PARALLEL_UPDATES = 0

SATELLITE = AssistSatelliteEntityDescription(key="assist_satellite", name=None)


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

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, SATELLITE)

    @callback
    def async_get_configuration(self) -> AssistSatelliteConfiguration:
        """The wake words the satellite loaded, and those it listens for."""
        info = self.satellite.info
        words = [
            AssistSatelliteWakeWord(
                id=w, wake_word=w.replace("_", " "), trained_languages=[info.language]
            )
            for w in info.wake_words
        ]
        return AssistSatelliteConfiguration(
            available_wake_words=words,
            active_wake_words=list(self.satellite.controls.wake_words),
            max_active_wake_words=len(words),
        )

    async def async_set_configuration(self, config: AssistSatelliteConfiguration) -> None:
        """Listen for the active wake words (among those the satellite loaded)."""
        await self.satellite.controls.async_set_wake_words(config.active_wake_words)

    def on_pipeline_event(self, event: PipelineEvent) -> None:
        """Not used: the satellite runs its own pipeline on the device."""

    async def async_announce(self, announcement: AssistSatelliteAnnouncement) -> None:
        """Speak the message on the satellite; return when it is done or timed out."""
        if not announcement.message:
            raise HomeAssistantError(
                translation_domain=DOMAIN, translation_key="announce_text_only"
            )
        done = await self.satellite.async_say(announcement.message, SAY_TIMEOUT_SECONDS)
        if done is None:
            _LOGGER.warning(
                "%s did not confirm the announcement within %s s",
                self.entity_id,
                SAY_TIMEOUT_SECONDS,
            )
        elif done.status == "error":
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="announce_failed",
                translation_placeholders={"error": str(done.error)},
            )
