"""Text to speech by the satellite's own voice (``tts/request`` -> WAV)."""

from __future__ import annotations

from typing import Any

from homeassistant.components.tts import (
    ATTR_VOICE,
    TextToSpeechEntity,
    TtsAudioType,
    Voice,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.entity import EntityDescription
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import TTS_TIMEOUT_SECONDS
from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0
TTS = EntityDescription(key="tts", translation_key="tts")


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the TTS entity."""
    async_add_entities([PocketTts(entry.runtime_data.satellite)])


class PocketTts(PocketSatelliteEntity, TextToSpeechEntity):
    """Asks the satellite to synthesise and returns its WAV."""

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, TTS)
        self._attr_default_language = satellite.info.language
        self._attr_supported_languages = [satellite.info.language]
        self._attr_supported_options = [ATTR_VOICE]

    @callback
    def async_get_supported_voices(self, language: str) -> list[Voice] | None:
        """The satellite's voices."""
        return [Voice(voice_id=v, name=v) for v in self.satellite.info.voices]

    async def async_get_tts_audio(
        self, message: str, language: str, options: dict[str, Any]
    ) -> TtsAudioType:
        """A WAV from the satellite; HomeAssistantError when it fails or times out."""
        voice = options.get(ATTR_VOICE)
        wav = await self.satellite.async_tts(
            message, voice if isinstance(voice, str) else None, TTS_TIMEOUT_SECONDS
        )
        return "wav", wav
