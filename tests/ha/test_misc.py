"""Edge cases: stored info, wake word configuration, odd TTS answers, intent speech."""

from __future__ import annotations

import asyncio
from unittest.mock import MagicMock

import pytest
from homeassistant.components import tts
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from .conftest import DOMAIN, INFO, fire, published


async def test_invalid_stored_info_is_a_setup_error(
    hass: HomeAssistant, mqtt_mock: MagicMock, caplog: pytest.LogCaptureFixture
) -> None:
    entry = MockConfigEntry(
        domain=DOMAIN,
        unique_id="kitchen",
        data={"satellite_id": "kitchen", "base_topic": "pocket_satellite", "info": {"id": 1}},
    )
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    # Retrying cannot mend stored data: a setup error that tells the user what to do.
    assert entry.state is ConfigEntryState.SETUP_ERROR
    assert entry.reason is not None and "Remove the satellite and add it again" in entry.reason


async def test_wake_word_configuration(hass: HomeAssistant, setup_entry: MockConfigEntry) -> None:
    entity = hass.data["assist_satellite"].get_entity("assist_satellite.kitchen")
    config = entity.async_get_configuration()
    assert [w.id for w in config.available_wake_words] == INFO["wake_words"]
    assert config.available_wake_words[0].wake_word == "okay nabu"
    assert config.active_wake_words == INFO["wake_words"]
    entity.on_pipeline_event(MagicMock())  # not used; must not fail


@pytest.mark.parametrize(
    ("answer", "error"),
    [("not json at all", "invalid JSON"), ('{"id": "x"}', "unknown error")],
)
async def test_odd_tts_answers_are_errors(
    hass: HomeAssistant,
    setup_entry: MockConfigEntry,
    mqtt_mock: MagicMock,
    answer: str,
    error: str,
) -> None:
    entity = hass.data[tts.DATA_COMPONENT].get_entity("tts.kitchen_voice")
    task = hass.async_create_task(entity.async_get_tts_audio("Hi", "en", {}))
    for _ in range(100):
        if published(mqtt_mock, "tts/request"):
            break
        await asyncio.sleep(0)
    request_id = published(mqtt_mock, "tts/request")[-1]["id"]
    fire(hass, f"tts/response/{request_id}", answer)
    with pytest.raises(HomeAssistantError, match=error):
        await task
