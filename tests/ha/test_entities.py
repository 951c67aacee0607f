"""Entities follow the satellite's messages (golden examples) and its status."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest.mock import MagicMock

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNAVAILABLE, STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
    async_fire_time_changed,
)

from .conftest import example, fire

SATELLITE = "assist_satellite.kitchen"
RATE = "sensor.kitchen_speech_rate"
LAST_INTENT = "sensor.kitchen_last_intent"
ACTIVITY = "sensor.kitchen_activity"
RUSHED = "binary_sensor.kitchen_rushed_speech"
CONNECTED = "binary_sensor.kitchen_connected"
INTENT_EVENT = "event.kitchen_intent"
ALERT_EVENT = "event.kitchen_alert"
TTS = "tts.kitchen_voice"


def _state(hass: HomeAssistant, entity_id: str) -> str:
    state = hass.states.get(entity_id)
    assert state is not None, entity_id
    return state.state


@pytest.mark.usefixtures("enable_all_entities")
async def test_entities_exist_with_unique_ids(
    hass: HomeAssistant, setup_entry: MockConfigEntry, entity_registry: er.EntityRegistry
) -> None:
    assert setup_entry.state is ConfigEntryState.LOADED
    for entity_id in (
        SATELLITE,
        ACTIVITY,
        RATE,
        LAST_INTENT,
        RUSHED,
        CONNECTED,
        INTENT_EVENT,
        ALERT_EVENT,
        TTS,
    ):
        entry = entity_registry.async_get(entity_id)
        assert entry is not None, entity_id
        assert entry.unique_id.startswith("kitchen-")
    assert _state(hass, CONNECTED) == STATE_ON
    assert _state(hass, SATELLITE) == "idle"
    assert _state(hass, ACTIVITY) == "idle"
    assert _state(hass, RATE) == STATE_UNKNOWN


async def test_duplicates_are_disabled_by_default(
    hass: HomeAssistant, setup_entry: MockConfigEntry, entity_registry: er.EntityRegistry
) -> None:
    for entity_id in (LAST_INTENT, CONNECTED):
        entry = entity_registry.async_get(entity_id)
        assert entry is not None and entry.disabled_by is er.RegistryEntryDisabler.INTEGRATION
        assert hass.states.get(entity_id) is None
    assert _state(hass, RATE) == STATE_UNKNOWN


@pytest.mark.usefixtures("enable_all_entities")
async def test_status_drives_availability(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    fire(hass, "status", "offline")
    await hass.async_block_till_done()
    assert _state(hass, RATE) == STATE_UNAVAILABLE
    assert _state(hass, SATELLITE) == STATE_UNAVAILABLE
    assert _state(hass, CONNECTED) == STATE_OFF
    fire(hass, "status", "online")
    await hass.async_block_till_done()
    assert _state(hass, CONNECTED) == STATE_ON
    assert _state(hass, RATE) == STATE_UNKNOWN


async def test_activity_mirrors_the_satellite(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    listening, muted = example("state", 0), example("state", 1)
    fire(hass, "state", listening)
    await hass.async_block_till_done()
    assert _state(hass, ACTIVITY) == "listening"
    # Assist's own state is HA's: idle until HA announces through it.
    assert _state(hass, SATELLITE) == "idle"
    fire(hass, "state", muted)
    await hass.async_block_till_done()
    activity = hass.states.get(ACTIVITY)
    assert activity is not None and activity.state == "muted"
    assert activity.attributes["options"] == [
        "idle",
        "listening",
        "processing",
        "responding",
        "muted",
    ]
    fire(hass, "state", {**listening, "state": "exploded"})  # rejected, nothing changes
    fire(hass, "state", "{not json")
    await hass.async_block_till_done()
    assert _state(hass, ACTIVITY) == "muted"
    assert setup_entry.runtime_data.satellite.rejected == {"pocket_satellite/kitchen/state": 2}


async def test_prosody_and_alerts(hass: HomeAssistant, setup_entry: MockConfigEntry) -> None:
    fire(hass, "prosody", example("prosody"))
    await hass.async_block_till_done()
    assert float(_state(hass, RATE)) == 6.8
    rate = hass.states.get(RATE)
    assert rate is not None and rate.attributes["state_class"] == "measurement"

    alert = example("alert")
    fire(hass, "alert", alert)
    fire(hass, "alert", alert)  # a QoS 1 redelivery: same id, dropped
    await hass.async_block_till_done()
    assert _state(hass, RUSHED) == STATE_ON
    rushed = hass.states.get(RUSHED)
    assert rushed is not None and rushed.attributes["severity"] == "moderate"
    fired = hass.states.get(ALERT_EVENT)
    assert fired is not None and fired.attributes["event_type"] == "rushed_speech"
    assert fired.attributes["ratio"] == 1.62
    first_fired = fired.state
    # An utterance that was not judged clears the rate; the alert stays on.
    fire(hass, "prosody", example("prosody", 1))
    await hass.async_block_till_done()
    assert _state(hass, RATE) == STATE_UNKNOWN
    assert _state(hass, RUSHED) == STATE_ON
    # The satellite clears the alert.
    fire(hass, "alert/cleared", example("alert_cleared"))
    await hass.async_block_till_done()
    assert _state(hass, RUSHED) == STATE_OFF
    fired = hass.states.get(ALERT_EVENT)
    assert fired is not None and fired.attributes["event_type"] == "cleared"
    assert fired.state != first_fired or fired.attributes["duration_seconds"] == 55.7

    # An unknown alert kind is an 'other' event and leaves the rushed sensor alone.
    fire(hass, "alert", {**alert, "id": "x2", "kind": "fall"})
    fire(hass, "alert/cleared", {**example("alert_cleared"), "id": "x3", "kind": "fall"})
    await hass.async_block_till_done()
    fired = hass.states.get(ALERT_EVENT)
    assert fired is not None and fired.attributes["event_type"] == "cleared"
    assert _state(hass, RUSHED) == STATE_OFF


@pytest.mark.usefixtures("enable_all_entities")
async def test_help_and_intents(hass: HomeAssistant, setup_entry: MockConfigEntry) -> None:
    events = async_capture_events(hass, "pocket_satellite_intent")
    help_events = async_capture_events(hass, "pocket_satellite_help")
    fire(hass, "help", example("help"))
    fire(hass, "help", example("help"))  # redelivered
    await hass.async_block_till_done()
    fired = hass.states.get(ALERT_EVENT)
    assert fired is not None and fired.attributes["event_type"] == "help"
    assert fired.attributes["severity"] == "urgent"
    assert [e.data["severity"] for e in help_events] == ["urgent"]

    not_understood = example("intent", 2)  # intent null: recorded, nothing to run
    fire(hass, "intent", not_understood)
    await hass.async_block_till_done()
    assert _state(hass, LAST_INTENT) == STATE_UNKNOWN

    intent = example("intent", 1)  # CallNurse: not an HA intent
    fire(hass, "intent", intent)
    fire(hass, "intent", intent)
    await hass.async_block_till_done()
    assert _state(hass, LAST_INTENT) == "CallNurse"
    event_state = hass.states.get(INTENT_EVENT)
    assert event_state is not None and event_state.attributes["source"] == "llm"
    assert [e.data["intent"] for e in events] == [None, "CallNurse"]
    assert events[0].data["satellite_id"] == "kitchen"


async def test_rushed_speech_turns_off_after_the_hold(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    fire(hass, "alert", example("alert"))
    await hass.async_block_till_done()
    assert _state(hass, RUSHED) == STATE_ON
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=301))
    await hass.async_block_till_done()
    assert _state(hass, RUSHED) == STATE_OFF


@pytest.mark.parametrize(
    ("path", "payload"),
    [
        ("intent", {"intent": "HassTurnOn"}),
        ("alert", {**example("alert"), "ratio": "fast"}),
        ("prosody", {"utterance_id": "u1"}),
        ("prosody", {**example("prosody"), "judged": "yes"}),
        ("alert/cleared", {"id": "c1"}),
        ("help", {"id": "h1", "severity": 3}),
        ("info", {"id": "kitchen"}),
        ("say/done", {"status": "done"}),
        ("intent", {**example("intent"), "slots": ["name"]}),
        ("state", "x" * 70000),
    ],
)
async def test_bad_payloads_are_ignored(
    hass: HomeAssistant, setup_entry: MockConfigEntry, path: str, payload: Any
) -> None:
    before = {s.entity_id: s.state for s in hass.states.async_all()}
    fire(hass, path, payload)
    await hass.async_block_till_done()
    assert {s.entity_id: s.state for s in hass.states.async_all()} == before
    assert sum(setup_entry.runtime_data.satellite.rejected.values()) == 1


async def test_info_updates_and_unload(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    fire(hass, "info", {**example("info"), "voices": ["en-us", "de"]})
    await hass.async_block_till_done()
    assert setup_entry.runtime_data.satellite.info.voices == ("en-us", "de")
    assert await hass.config_entries.async_unload(setup_entry.entry_id)
    await hass.async_block_till_done()
    assert setup_entry.state is ConfigEntryState.NOT_LOADED


async def test_setup_retries_without_mqtt(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    config_entry.add_to_hass(hass)
    await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.SETUP_RETRY
