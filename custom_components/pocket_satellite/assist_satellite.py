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
from homeassistant.components.assist_satellite.const import PREANNOUNCE_URL
from homeassistant.components.intent import (
    TimerEventType,
    TimerInfo,
    async_register_timer_handler,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import DOMAIN, SAY_TIMEOUT_SECONDS
from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .media import async_fetch_wav
from .models import PocketConfigEntry
from .replies import phrase

_LOGGER = logging.getLogger(__name__)
PARALLEL_UPDATES = 0

SATELLITE = AssistSatelliteEntityDescription(key="assist_satellite", name=None)
#: The media of an announcement the satellite speaks in its own voice: handed to core in
#: place of none, so that core does not first run the pipeline's TTS engine on the text.
SPOKEN_ON_DEVICE = "pocket-satellite:spoken-on-device"


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

    async def async_added_to_hass(self) -> None:
        """Take the timers set through this satellite (HassStartTimer with its device)."""
        await super().async_added_to_hass()
        assert self.registry_entry is not None and self.registry_entry.device_id is not None
        self.async_on_remove(
            async_register_timer_handler(
                self.hass, self.registry_entry.device_id, self.handle_timer_event
            )
        )

    @callback
    def handle_timer_event(self, event_type: TimerEventType, timer: TimerInfo) -> None:
        """A timer set here ended: the satellite says so, in its language."""
        if event_type is not TimerEventType.FINISHED:
            return
        language = self.satellite.info.language
        text = (
            phrase(language, "timer_done_name", name=timer.name)
            if timer.name
            else phrase(language, "timer_done")
        )
        self.hass.async_create_background_task(
            self.satellite.async_say(text, SAY_TIMEOUT_SECONDS),
            f"{self.entity_id} timer {timer.id}",
        )

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

    async def async_internal_announce(
        self,
        message: str | None = None,
        media_id: str | None = None,
        preannounce: bool = True,
        preannounce_media_id: str = PREANNOUNCE_URL,
    ) -> None:
        """Announce; a message without media is spoken by the satellite itself.

        Core would synthesise such a message with the pipeline's TTS engine before
        calling async_announce (the Pi would synthesise it twice with our own TTS entity,
        and with no engine the announce would fail); given a placeholder media id it
        does not, and still shows the entity responding while the satellite speaks.
        """
        if message and not media_id:
            media_id = SPOKEN_ON_DEVICE
        await super().async_internal_announce(message, media_id, preannounce, preannounce_media_id)

    async def async_announce(self, announcement: AssistSatelliteAnnouncement) -> None:
        """Speak the message on the satellite (after its chime when preannounced), or
        play media alone (a WAV HA fetches and sends); return when it is done or timed
        out."""
        if announcement.message:
            done = await self.satellite.async_say(
                announcement.message,
                SAY_TIMEOUT_SECONDS,
                preannounce=announcement.preannounce_media_id is not None,
            )
        elif announcement.media_id and announcement.media_id != SPOKEN_ON_DEVICE:
            wav = await async_fetch_wav(self.hass, announcement.media_id)
            done = await self.satellite.async_play(wav, SAY_TIMEOUT_SECONDS)
        else:
            raise HomeAssistantError(
                translation_domain=DOMAIN, translation_key="announce_text_only"
            )
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
