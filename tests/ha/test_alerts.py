"""Help requests and alerts reach HA once each: from the retained ``alert/active`` at
start-up or from their own topics, deduplicated by id across reloads and restarts, then
acknowledged on ``alert/ack``; the help sensor stays on until someone clears it; the
buttons, the clear action and the device triggers."""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import MagicMock

import pytest
from homeassistant.components import automation
from homeassistant.components.device_automation import DeviceAutomationType
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant, State
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import device_registry as dr
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
    async_fire_mqtt_message,
    async_get_device_automations,
    mock_restore_cache,
)

from custom_components.pocket_satellite.const import (
    DOMAIN,
    EVENT_ALERT,
    EVENT_ALERT_CLEARED,
    EVENT_HELP,
    SERVICE_CLEAR_HELP,
)
from custom_components.pocket_satellite.messages import ActiveAlerts, MessageError

from .conftest import BASE, example, fire, golden, published

pytestmark = pytest.mark.parametrize("expected_lingering_timers", [True])

HELP_SENSOR = "binary_sensor.kitchen_help_requested"
CLEAR_BUTTON = "button.kitchen_clear_help_request"
STOP_BUTTON = "button.kitchen_stop"
ALERT_EVENT = "event.kitchen_alert"
STORE_KEY = "pocket_satellite.kitchen.fired_alerts"
#: Two open alerts: a help request (sent three times) and rushed speech.
ACTIVE = example("alert_active")
HELP_ID, RUSHED_ID = (alert["id"] for alert in ACTIVE["alerts"])


def _active(hass: HomeAssistant, payload: dict[str, Any], retain: bool = False) -> None:
    """``alert/active``: retained when a subscription starts, live when it changes."""
    async_fire_mqtt_message(hass, f"{BASE}/alert/active", json.dumps(payload), retain=retain)


def _state(hass: HomeAssistant, entity_id: str) -> State:
    state = hass.states.get(entity_id)
    assert state is not None, entity_id
    return state


def _device_id(hass: HomeAssistant) -> str:
    device = dr.async_get(hass).async_get_device(identifiers={(DOMAIN, "kitchen")})
    assert device is not None
    return device.id


async def test_retained_open_alerts_fire_once_each_then_are_acknowledged(
    hass: HomeAssistant,
    setup_entry: MockConfigEntry,
    mqtt_mock: MagicMock,
    hass_storage: dict[str, Any],
) -> None:
    helps = async_capture_events(hass, EVENT_HELP)
    alerts = async_capture_events(hass, EVENT_ALERT)
    _active(hass, ACTIVE, retain=True)
    await hass.async_block_till_done()
    (help_event,) = helps
    help_payload = ACTIVE["alerts"][0]["payload"]
    assert help_event.data == {
        "device_id": _device_id(hass),
        "satellite_id": "kitchen",
        "severity": "urgent",
        "utterance_id": help_payload["utterance_id"],
        "id": HELP_ID,
        "time": help_payload["time"],  # when help was asked for, not when HA heard of it
    }
    (alert_event,) = alerts
    assert (alert_event.data["id"], alert_event.data["kind"]) == (RUSHED_ID, "rushed_speech")
    assert alert_event.data["time"] == ACTIVE["alerts"][1]["payload"]["time"]
    assert published(mqtt_mock, "alert/ack") == [{"id": HELP_ID}, {"id": RUSHED_ID}]
    ack_contract = golden("alert_ack")  # what the satellite accepts (tests/golden/)
    assert (ack_contract["topic"], ack_contract["direction"]) == ("alert/ack", "in")
    assert published(mqtt_mock, "alert/ack") == ack_contract["examples"]
    acks = [c for c in mqtt_mock.async_publish.call_args_list if c.args[0] == f"{BASE}/alert/ack"]
    assert [c.args[2:4] for c in acks] == [(1, False)] * 2  # QoS 1, not retained
    assert hass_storage[STORE_KEY]["data"] == [HELP_ID, RUSHED_ID]
    help_sensor = _state(hass, HELP_SENSOR)
    assert help_sensor.state == STATE_ON and help_sensor.attributes["id"] == HELP_ID
    assert help_sensor.attributes["time"] == help_payload["time"]
    assert _state(hass, "binary_sensor.kitchen_rushed_speech").state == STATE_ON

    # The satellite sends the help again before our ack closed it, and alert/active
    # still lists both: nothing fires again; each is acknowledged again.
    fire(hass, "help", help_payload)
    _active(hass, ACTIVE)
    await hass.async_block_till_done()
    assert (len(helps), len(alerts)) == (1, 1)
    assert published(mqtt_mock, "alert/ack")[2:] == [
        {"id": HELP_ID},
        {"id": HELP_ID},
        {"id": RUSHED_ID},
    ]
    # The satellite closed them: an empty list changes nothing.
    _active(hass, example("alert_active", 1))
    await hass.async_block_till_done()
    assert _state(hass, HELP_SENSOR).state == STATE_ON
    assert len(published(mqtt_mock, "alert/ack")) == 5


async def test_a_reload_does_not_fire_the_same_alert_again(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    helps = async_capture_events(hass, EVENT_HELP)
    fire(hass, "help", ACTIVE["alerts"][0]["payload"])  # live, on its own topic
    await hass.async_block_till_done()
    assert len(helps) == 1
    assert await hass.config_entries.async_reload(setup_entry.entry_id)
    await hass.async_block_till_done()
    _active(hass, ACTIVE, retain=True)  # the retained state the new subscription gets
    await hass.async_block_till_done()
    assert [e.data["id"] for e in helps] == [HELP_ID]  # only the rushed alert was new
    assert published(mqtt_mock, "alert/ack") == [
        {"id": HELP_ID},
        {"id": HELP_ID},
        {"id": RUSHED_ID},
    ]


async def test_an_ack_that_cannot_be_sent_waits_for_the_next_alert_active(
    hass: HomeAssistant,
    setup_entry: MockConfigEntry,
    mqtt_mock: MagicMock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    helps = async_capture_events(hass, EVENT_HELP)
    mqtt_mock.async_publish.side_effect = HomeAssistantError("MQTT is not connected")
    _active(hass, ACTIVE, retain=True)
    await hass.async_block_till_done()
    assert len(helps) == 1 and f"Could not acknowledge alert {HELP_ID} yet" in caplog.text
    mqtt_mock.async_publish.side_effect = None
    _active(hass, ACTIVE)  # the satellite still lists it: acknowledged now, not fired
    await hass.async_block_till_done()
    assert len(helps) == 1
    assert published(mqtt_mock, "alert/ack")[-2:] == [{"id": HELP_ID}, {"id": RUSHED_ID}]


async def test_after_a_restart_fired_ids_come_from_storage(
    hass: HomeAssistant,
    mqtt_mock: MagicMock,
    config_entry: MockConfigEntry,
    hass_storage: dict[str, Any],
) -> None:
    hass_storage[STORE_KEY] = {
        "version": 1,
        "minor_version": 1,
        "key": STORE_KEY,
        "data": [HELP_ID],
    }
    helps = async_capture_events(hass, EVENT_HELP)
    alerts = async_capture_events(hass, EVENT_ALERT)
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    _active(hass, ACTIVE, retain=True)
    await hass.async_block_till_done()
    assert helps == [] and [e.data["id"] for e in alerts] == [RUSHED_ID]
    assert published(mqtt_mock, "alert/ack") == [{"id": HELP_ID}, {"id": RUSHED_ID}]


async def test_help_sensor_stays_on_until_the_button_or_the_action_clears_it(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    cleared = async_capture_events(hass, EVENT_ALERT_CLEARED)
    assert _state(hass, HELP_SENSOR).state == STATE_OFF
    help_payload = example("help")
    fire(hass, "help", help_payload)
    await hass.async_block_till_done()
    assert _state(hass, HELP_SENSOR).state == STATE_ON
    # Calm speech, the satellite going offline: the request is still open.
    fire(hass, "alert/cleared", example("alert_cleared"))
    async_fire_mqtt_message(hass, f"{BASE}/status", "offline")
    await hass.async_block_till_done()
    assert _state(hass, HELP_SENSOR).state == STATE_ON
    assert _state(hass, STOP_BUTTON).state == STATE_UNAVAILABLE
    assert _state(hass, CLEAR_BUTTON).state != STATE_UNAVAILABLE
    await hass.services.async_call("button", "press", {"entity_id": CLEAR_BUTTON}, blocking=True)
    assert _state(hass, HELP_SENSOR).state == STATE_OFF
    assert [e.data["kind"] for e in cleared] == ["rushed_speech", "help"]
    assert cleared[1].data["id"] == help_payload["id"]
    assert cleared[1].data["device_id"] == _device_id(hass)

    fire(hass, "help", {**help_payload, "id": "h5b2c3d4e-2"})
    await hass.async_block_till_done()
    assert _state(hass, HELP_SENSOR).state == STATE_ON
    await hass.services.async_call(
        DOMAIN, SERVICE_CLEAR_HELP, {"device_id": _device_id(hass)}, blocking=True
    )
    assert _state(hass, HELP_SENSOR).state == STATE_OFF
    fire(hass, "help", {**help_payload, "id": "h5b2c3d4e-3"})
    await hass.async_block_till_done()
    await hass.services.async_call(DOMAIN, SERVICE_CLEAR_HELP, {}, blocking=True)  # all
    assert _state(hass, HELP_SENSOR).state == STATE_OFF
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(
            DOMAIN, SERVICE_CLEAR_HELP, {"device_id": "nope"}, blocking=True
        )
    assert err.value.translation_key == "not_a_satellite"


async def test_an_open_help_request_survives_a_restart_of_home_assistant(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> None:
    attributes = {"id": "h1-1", "time": 1764400030.5, "severity": "urgent", "utterance_id": "u6"}
    mock_restore_cache(hass, [State(HELP_SENSOR, STATE_ON, {**attributes, "other": 1})])
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    state = _state(hass, HELP_SENSOR)
    assert state.state == STATE_ON and state.attributes["id"] == "h1-1"
    assert "other" not in state.attributes


async def test_stop_button_sends_the_stop_control(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    await hass.services.async_call("button", "press", {"entity_id": STOP_BUTTON}, blocking=True)
    assert published(mqtt_mock, "control") == [{"command": "stop"}]
    assert {"command": "stop"} in golden("control")["examples"]


async def test_device_triggers_run_automations(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    device_id = _device_id(hass)
    triggers = await async_get_device_automations(hass, DeviceAutomationType.TRIGGER, device_id)
    ours = sorted(t["type"] for t in triggers if t["domain"] == DOMAIN)
    assert ours == ["alert_cleared", "help_requested", "rushed_speech"]
    assert await async_setup_component(
        hass,
        automation.DOMAIN,
        {
            automation.DOMAIN: [
                {
                    "trigger": {
                        "platform": "device",
                        "domain": DOMAIN,
                        "device_id": device_id,
                        "type": kind,
                    },
                    "action": {"event": "test_ran", "event_data": {"type": kind}},
                }
                for kind in ours
            ]
        },
    )
    ran = async_capture_events(hass, "test_ran")
    fire(hass, "help", example("help"))
    fire(hass, "alert", example("alert"))
    fire(hass, "alert", {**example("alert"), "id": "a1-9", "kind": "fall"})  # not rushed
    fire(hass, "alert/cleared", example("alert_cleared"))
    await hass.async_block_till_done()
    assert [e.data["type"] for e in ran] == ["help_requested", "rushed_speech", "alert_cleared"]
    other = dr.async_get(hass).async_get_or_create(
        config_entry_id=setup_entry.entry_id, identifiers={("other", "x")}
    )
    assert await async_get_device_automations(hass, DeviceAutomationType.TRIGGER, other.id) == []


@pytest.mark.parametrize(
    "payload",
    [
        {"alerts": {}, "notice": ""},
        {"alerts": [1], "notice": ""},
        {"alerts": [{**ACTIVE["alerts"][0], "payload": []}], "notice": ""},
        {"alerts": [{**ACTIVE["alerts"][0], "id": "h9-9"}], "notice": ""},
        {"alerts": [{**ACTIVE["alerts"][0], "sent": "3"}], "notice": ""},
        {"alerts": [], "notice": None},
    ],
)
def test_malformed_alert_active_is_rejected(payload: dict[str, Any]) -> None:
    with pytest.raises(MessageError):
        ActiveAlerts.parse(payload)


def test_alerts_from_an_unknown_source_are_left_out() -> None:
    future = {**ACTIVE["alerts"][0], "source": "fall", "kind": "fall"}
    parsed = ActiveAlerts.parse({**ACTIVE, "alerts": [future, ACTIVE["alerts"][0]]})
    assert [a.message.id for a in parsed.alerts] == [HELP_ID]
    assert parsed.alerts[0].sent == 3
