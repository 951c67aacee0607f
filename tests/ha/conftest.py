"""Fixtures for the Pocket Satellite component's tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock, Mock, PropertyMock, patch

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_mqtt_message,
)

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
DOMAIN = "pocket_satellite"
BASE = "pocket_satellite/kitchen"


def golden(name: str) -> dict[str, Any]:
    """A golden example file shared with the satellite's tests."""
    data: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return data


def example(name: str, index: int = 0) -> Any:
    """One example payload of a golden file."""
    return golden(name)["examples"][index]


INFO = example("info")


@pytest.fixture(autouse=True)
async def auto_enable_custom_integrations(
    hass: HomeAssistant, enable_custom_integrations: None
) -> None:
    """Let HA find our component next to the test plugin's own custom_components, and
    set up the core integration a real HA always has (exposed entities live there)."""
    import custom_components  # noqa: PLC0415 - the plugin's package, patched below

    path = str(REPO / "custom_components")
    if path not in custom_components.__path__:
        custom_components.__path__.append(path)
    assert await async_setup_component(hass, "homeassistant", {})


@pytest.fixture
def mqtt_client_mock(mqtt_client_mock: MagicMock) -> MagicMock:
    """The plugin's stand-in for paho, closing its socket on ``disconnect`` as paho does.

    The plugin's stand-in opens a socket on connect and never closes it, so MQTT's
    periodic ``_async_misc`` timer outlived every test ("Lingering timer after test").
    With the socket closed when the MQTT entry unloads, MQTT cancels that timer itself
    and no test needs ``expected_lingering_timers``.
    """

    def disconnect(*args: Any, **kwargs: Any) -> int:
        socket = Mock(fileno=Mock(return_value=-1))
        mqtt_client_mock.on_socket_close(mqtt_client_mock, None, socket)
        return 0

    mqtt_client_mock.disconnect.side_effect = disconnect
    return mqtt_client_mock


@pytest.fixture
def enable_all_entities() -> Iterator[None]:
    """Entities disabled by default (last intent, connected) enabled, as a user would."""
    with patch(
        "homeassistant.helpers.entity.Entity.entity_registry_enabled_default",
        new_callable=PropertyMock,
        return_value=True,
    ):
        yield


@pytest.fixture
def config_entry() -> MockConfigEntry:
    """A configured kitchen satellite."""
    return MockConfigEntry(
        domain=DOMAIN,
        title="Kitchen",
        unique_id="kitchen",
        data={"satellite_id": "kitchen", "base_topic": "pocket_satellite", "info": INFO},
    )


@pytest.fixture
async def setup_entry(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> MockConfigEntry:
    """The integration set up with the satellite online."""
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    async_fire_mqtt_message(hass, f"{BASE}/status", "online", retain=True)
    await hass.async_block_till_done()
    return config_entry


def fire(hass: HomeAssistant, path: str, payload: Any) -> None:
    """Fire a satellite message (dicts as JSON)."""
    raw = payload if isinstance(payload, str | bytes) else json.dumps(payload)
    async_fire_mqtt_message(hass, f"{BASE}/{path}", raw)


def published(mqtt_mock: MagicMock, path: str) -> list[Any]:
    """Payloads published to ``path`` under the satellite, parsed as JSON."""
    return [
        json.loads(call.args[1])
        for call in mqtt_mock.async_publish.call_args_list
        if call.args[0] == f"{BASE}/{path}"
    ]
