"""Config flow: MQTT discovery, manual entry, errors, aborts, reconfigure."""

from __future__ import annotations

import asyncio
import json
from unittest.mock import AsyncMock, MagicMock, patch

import pytest
from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers.service_info.mqtt import MqttServiceInfo
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_mqtt_message,
)

from custom_components.pocket_satellite.config_flow import async_fetch_info
from custom_components.pocket_satellite.messages import SatelliteInfo

from .conftest import DOMAIN, INFO

FETCH = "custom_components.pocket_satellite.config_flow.async_fetch_info"


def _discovery(payload: str, topic: str = "pocket_satellite/kitchen/info") -> MqttServiceInfo:
    return MqttServiceInfo(
        topic=topic,
        payload=payload,
        qos=1,
        retain=True,
        subscribed_topic="pocket_satellite/+/info",
        timestamp=0.0,
    )


async def test_discovery_then_confirm(hass: HomeAssistant, mqtt_mock: MagicMock) -> None:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_MQTT}, data=_discovery(json.dumps(INFO))
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "discovery_confirm"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Kitchen"
    assert result["data"]["satellite_id"] == "kitchen"
    assert result["data"]["info"] == INFO
    assert result["result"].unique_id == "kitchen"
    # Discovered again: already configured.
    again = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_MQTT}, data=_discovery(json.dumps(INFO))
    )
    assert again["type"] is FlowResultType.ABORT
    assert again["reason"] == "already_configured"


@pytest.mark.parametrize(
    ("payload", "topic"),
    [
        ("not json", "pocket_satellite/kitchen/info"),
        (json.dumps({**INFO, "voices": "en"}), "pocket_satellite/kitchen/info"),
        (json.dumps(INFO), "pocket_satellite/other/info"),
        (json.dumps(INFO), "bad topic!/kitchen/info"),
    ],
)
async def test_discovery_rejects_bad_info(
    hass: HomeAssistant, mqtt_mock: MagicMock, payload: str, topic: str
) -> None:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_MQTT}, data=_discovery(payload, topic)
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "invalid_discovery_info"


async def test_user_step_errors_then_success(hass: HomeAssistant, mqtt_mock: MagicMock) -> None:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "user"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"satellite_id": "Kitchen!", "base_topic": "a b"}
    )
    assert result["errors"] == {
        "satellite_id": "invalid_satellite_id",
        "base_topic": "invalid_base_topic",
    }
    with patch(FETCH, AsyncMock(return_value=None)):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {"satellite_id": "kitchen", "base_topic": "pocket_satellite"}
        )
    assert result["errors"] == {"base": "cannot_connect"}
    with patch(FETCH, AsyncMock(return_value=SatelliteInfo.parse(INFO))) as fetch:
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {"satellite_id": "kitchen", "base_topic": "/pocket_satellite/"}
        )
    assert fetch.call_args.args[1:3] == ("pocket_satellite", "kitchen")
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        "satellite_id": "kitchen",
        "base_topic": "pocket_satellite",
        "info": INFO,
    }


async def test_user_step_aborts_on_duplicate(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> None:
    config_entry.add_to_hass(hass)
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"satellite_id": "kitchen", "base_topic": "pocket_satellite"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_user_step_needs_mqtt(hass: HomeAssistant) -> None:
    with patch(
        "custom_components.pocket_satellite.config_flow.mqtt.async_wait_for_mqtt_client",
        AsyncMock(return_value=False),
    ):
        result = await hass.config_entries.flow.async_init(
            DOMAIN, context={"source": config_entries.SOURCE_USER}
        )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "mqtt_not_connected"


async def test_reconfigure(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> None:
    config_entry.add_to_hass(hass)
    result = await config_entry.start_reconfigure_flow(hass)
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "reconfigure"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"satellite_id": "kitchen", "base_topic": "bad topic"}
    )
    assert result["errors"] == {"base_topic": "invalid_base_topic"}
    with patch(FETCH, AsyncMock(return_value=None)):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {"satellite_id": "kitchen", "base_topic": "home/sats"}
        )
    assert result["errors"] == {"base": "cannot_connect"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"satellite_id": "bedroom", "base_topic": "home/sats"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "wrong_satellite"
    result = await config_entry.start_reconfigure_flow(hass)
    new_info = {**INFO, "version": "0.2.0"}
    with patch(FETCH, AsyncMock(return_value=SatelliteInfo.parse(new_info))):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {"satellite_id": "kitchen", "base_topic": "home/sats"}
        )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert config_entry.data["base_topic"] == "home/sats"
    assert config_entry.data["info"]["version"] == "0.2.0"


async def test_fetch_info_waits_for_the_retained_info(
    hass: HomeAssistant, mqtt_mock: MagicMock
) -> None:
    task = hass.async_create_task(async_fetch_info(hass, "pocket_satellite", "kitchen", 5.0))
    for _ in range(5):  # let it subscribe
        await asyncio.sleep(0)
    async_fire_mqtt_message(hass, "pocket_satellite/kitchen/info", "garbage")
    async_fire_mqtt_message(
        hass, "pocket_satellite/kitchen/info", json.dumps({**INFO, "id": "other"})
    )
    async_fire_mqtt_message(hass, "pocket_satellite/kitchen/info", json.dumps(INFO))
    info = await task
    assert info == SatelliteInfo.parse(INFO)
    assert await async_fetch_info(hass, "pocket_satellite", "kitchen", 0.01) is None
