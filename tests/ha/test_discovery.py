"""Discovery of every satellite (any base topic, several, again after an abort), info
kept current (entry, device registry) and a repair issue on a protocol mismatch."""

from __future__ import annotations

import json
from unittest.mock import MagicMock

from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.service_info.mqtt import MqttServiceInfo
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_mqtt_message,
)

from .conftest import BASE, DOMAIN, INFO, fire, golden

COMPONENT = f"{BASE}/component"


def _flows(hass: HomeAssistant) -> dict[str, str]:
    """Discovered satellites waiting for confirmation: id -> name."""
    return {
        flow["context"]["unique_id"]: flow["context"]["title_placeholders"]["name"]
        for flow in hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    }


async def test_satellites_under_any_base_topic_are_discovered(
    hass: HomeAssistant, mqtt_mock: MagicMock
) -> None:
    for topic, satellite_id, name in (
        ("pocket_satellite/kitchen/info", "kitchen", "Kitchen"),
        ("care_home/room_12/info", "room_12", "Room 12"),
        ("site_a/wing_b/room_14/info", "room_14", "Room 14"),
    ):
        payload = {**INFO, "id": satellite_id, "name": name}
        async_fire_mqtt_message(hass, topic, json.dumps(payload), retain=True)
    async_fire_mqtt_message(hass, "zigbee2mqtt/bridge/info", json.dumps({"version": "2"}))
    await hass.async_block_till_done(wait_background_tasks=True)  # discovery flows
    assert _flows(hass) == {"kitchen": "Kitchen", "room_12": "Room 12", "room_14": "Room 14"}
    flow = next(
        f
        for f in hass.config_entries.flow.async_progress_by_handler(DOMAIN)
        if f["context"]["unique_id"] == "room_14"
    )
    result = await hass.config_entries.flow.async_configure(flow["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"]["base_topic"] == "site_a/wing_b"


async def test_a_satellite_added_later_is_still_discovered(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> None:
    config_entry.add_to_hass(hass)  # the kitchen is configured: its info aborts
    async_fire_mqtt_message(hass, "pocket_satellite/kitchen/info", json.dumps(INFO))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert _flows(hass) == {}
    bedroom = {**INFO, "id": "bedroom", "name": "Bedroom"}
    async_fire_mqtt_message(hass, "pocket_satellite/bedroom/info", json.dumps(bedroom))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert _flows(hass) == {"bedroom": "Bedroom"}


async def test_discovery_of_a_configured_satellite_updates_its_entry(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> None:
    config_entry.add_to_hass(hass)
    newer = {**INFO, "version": "0.3.0"}
    result = await hass.config_entries.flow.async_init(
        DOMAIN,
        context={"source": config_entries.SOURCE_MQTT},
        data=_service_info("home/sats/kitchen/info", newer),
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert config_entry.data["info"]["version"] == "0.3.0"
    assert config_entry.data["base_topic"] == "home/sats"


async def test_info_keeps_the_device_and_the_entry_current(
    hass: HomeAssistant, setup_entry: MockConfigEntry, device_registry: dr.DeviceRegistry
) -> None:
    device = device_registry.async_get_device(identifiers={(DOMAIN, "kitchen")})
    assert device is not None
    assert (device.name, device.sw_version) == ("Kitchen", "0.1.0")
    assert setup_entry.entry_id in device.config_entries
    fire(hass, "info", {**INFO, "name": "Kitchen by the window", "version": "0.2.0"})
    await hass.async_block_till_done()
    device = device_registry.async_get_device(identifiers={(DOMAIN, "kitchen")})
    assert device is not None
    assert (device.name, device.sw_version) == ("Kitchen by the window", "0.2.0")
    assert setup_entry.data["info"]["version"] == "0.2.0"  # what setup uses next time


async def test_a_protocol_mismatch_raises_a_repair_issue_until_it_is_mended(
    hass: HomeAssistant, setup_entry: MockConfigEntry, issue_registry: ir.IssueRegistry
) -> None:
    assert issue_registry.async_get_issue(DOMAIN, "protocol_kitchen") is None
    fire(hass, "info", {**INFO, "protocol": 2})
    await hass.async_block_till_done()
    issue = issue_registry.async_get_issue(DOMAIN, "protocol_kitchen")
    assert issue is not None
    assert issue.translation_key == "protocol_newer"
    assert issue.translation_placeholders == {
        "name": "Kitchen",
        "satellite_protocol": "2",
        "protocol": "1",
    }
    fire(hass, "info", {**INFO, "protocol": 0})
    await hass.async_block_till_done()
    issue = issue_registry.async_get_issue(DOMAIN, "protocol_kitchen")
    assert issue is not None and issue.translation_key == "protocol_older"
    fire(hass, "info", INFO)
    await hass.async_block_till_done()
    assert issue_registry.async_get_issue(DOMAIN, "protocol_kitchen") is None


def _service_info(topic: str, payload: dict[str, object]) -> MqttServiceInfo:
    return MqttServiceInfo(
        topic=topic,
        payload=json.dumps(payload),
        qos=1,
        retain=True,
        subscribed_topic="+/+/+/info",
        timestamp=0.0,
    )


async def test_the_component_tells_the_satellite_to_stop_its_own_discovery(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    calls = [c for c in mqtt_mock.async_publish.call_args_list if c.args[0] == COMPONENT]
    assert [(json.loads(c.args[1]), c.args[3]) for c in calls] == [
        (golden("component")["examples"][0], True)  # retained
    ]
    assert golden("component")["retain"] is True
    # Removing the entry clears it: the satellite announces its own entities again.
    assert await hass.config_entries.async_remove(setup_entry.entry_id)
    await hass.async_block_till_done()
    last = [c for c in mqtt_mock.async_publish.call_args_list if c.args[0] == COMPONENT][-1]
    assert (last.args[1], last.args[3]) == ("", True)
