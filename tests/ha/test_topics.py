"""Every JSON topic the satellite publishes: subscribed, kept, deduplicated, and a bad
payload rejected and logged (once as a warning, then quietly)."""

from __future__ import annotations

import logging
from typing import Any
from unittest.mock import MagicMock

import pytest
from homeassistant.core import (
    Event,
    HassJobType,
    HomeAssistant,
    callback,
    get_hassjob_callable_job_type,
)
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.pocket_satellite.const import EVENT_HELP
from custom_components.pocket_satellite.device import PocketSatellite
from custom_components.pocket_satellite.messages import IntentMessage
from custom_components.pocket_satellite.topics import TOPICS, TopicRow

from .conftest import BASE, example, fire, golden

DEVICE_LOGGER = "custom_components.pocket_satellite.device"
ROWS = pytest.mark.parametrize("row", TOPICS, ids=[row.path for row in TOPICS])
#: Sent through the satellite's outbox, which may deliver one twice (tests/golden/).
DEDUPED = {"intent", "alert", "alert/cleared", "help"}


@pytest.fixture
def satellite(setup_entry: MockConfigEntry) -> PocketSatellite:
    """The set-up kitchen satellite."""
    satellite: PocketSatellite = setup_entry.runtime_data.satellite
    return satellite


def _listen(satellite: PocketSatellite, kind: str | None) -> list[str]:
    calls: list[str] = []
    if kind is not None:
        satellite.add_listener(kind, lambda: calls.append(kind))
    return calls


def _golden(path: str) -> dict[str, Any]:
    return dict(example(path.replace("/", "_")))


@ROWS
def test_each_row_follows_the_golden_contract(row: TopicRow[Any]) -> None:
    contract = golden(row.path.replace("/", "_"))
    assert (contract["topic"], contract["direction"], contract["format"]) == (
        row.path,
        "out",
        "json",
    )
    assert contract["retain"] is row.retained
    assert row.dedupe is (row.path in DEDUPED)
    for payload in contract["examples"]:
        row.parse(payload)


async def test_every_topic_is_subscribed_in_order(
    satellite: PocketSatellite, mqtt_mock: MagicMock
) -> None:
    calls = [c for c in mqtt_mock.async_subscribe.call_args_list if c.args[0].startswith(BASE)]
    assert [(c.args[0], c.args[2], c.args[3]) for c in calls] == [
        (f"{BASE}/status", 1, "utf-8"),
        *((f"{BASE}/{row.path}", 1, "utf-8") for row in TOPICS),
        (f"{BASE}/tts/response/+", 1, None),
    ]
    # Every handler runs inline in the event loop, never in the executor.
    for c in calls:
        assert get_hassjob_callable_job_type(c.args[1]) is HassJobType.Callback


@ROWS
async def test_a_good_payload_is_kept_and_told(
    hass: HomeAssistant, satellite: PocketSatellite, row: TopicRow[Any]
) -> None:
    calls = _listen(satellite, row.kind)
    payload = _golden(row.path)
    if row.keep is not None:
        assert hasattr(satellite, row.keep), "keep names an attribute PocketSatellite declares"
    fire(hass, row.path, payload)
    fire(hass, row.path, payload)  # a QoS 1 redelivery: the same id again
    await hass.async_block_till_done()
    if row.keep is not None:
        assert getattr(satellite, row.keep) == row.parse(payload)
    assert len(calls) == (0 if row.kind is None else 1 if row.dedupe else 2)
    assert satellite.rejected == {}


@ROWS
async def test_a_bad_payload_is_rejected_and_logged_once(
    hass: HomeAssistant,
    satellite: PocketSatellite,
    caplog: pytest.LogCaptureFixture,
    row: TopicRow[Any],
) -> None:
    caplog.set_level(logging.DEBUG, logger=DEVICE_LOGGER)
    calls = _listen(satellite, row.kind)
    before = None if row.keep is None else getattr(satellite, row.keep)
    for payload in ("{not json", "[1, 2]", "{}"):
        fire(hass, row.path, payload)
    await hass.async_block_till_done()
    topic = f"{BASE}/{row.path}"
    assert satellite.rejected == {topic: 3}
    assert calls == []
    if row.keep is not None:
        assert getattr(satellite, row.keep) == before
    logged = [
        (r.levelno, r.getMessage())
        for r in caplog.records
        if r.name == DEVICE_LOGGER and "bad payload" in r.getMessage()
    ]
    assert [level for level, _ in logged] == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    assert logged[0][1].startswith(f"Ignoring a bad payload on {topic} (1 so far): invalid JSON")
    assert logged[1][1] == f"Ignoring a bad payload on {topic} (2 so far): expected a JSON object"
    assert logged[2][1].startswith(f"Ignoring a bad payload on {topic} (3 so far): ")


async def test_help_fires_its_event_before_the_listeners_are_told(
    hass: HomeAssistant, satellite: PocketSatellite
) -> None:
    order: list[str] = []
    satellite.add_listener("help", lambda: order.append("listeners"))

    @callback
    def _on_help(event: Event) -> None:
        assert satellite.last_help is not None and satellite.last_help.id == event.data["id"]
        order.append(f"event {event.data}")

    hass.bus.async_listen(EVENT_HELP, _on_help)
    help_request = _golden("help")
    fire(hass, "help", help_request)
    await hass.async_block_till_done()
    data = {
        **satellite.event_data,
        "severity": help_request["severity"],
        "utterance_id": help_request["utterance_id"],
        "id": help_request["id"],
        "time": help_request["time"],
    }
    assert data["device_id"] and data["satellite_id"] == "kitchen"
    assert order == [f"event {data}", "listeners"]


async def test_the_intent_handler_runs_after_the_listeners_are_told(
    hass: HomeAssistant, satellite: PocketSatellite
) -> None:
    order: list[str] = []
    satellite.add_listener("intent", lambda: order.append("listeners"))

    async def _handle(intent: IntentMessage) -> None:
        order.append(f"handler {intent.id}")

    satellite.intent_handler = _handle
    intent = _golden("intent")
    fire(hass, "intent", intent)
    await hass.async_block_till_done()
    assert order == ["listeners", f"handler {intent['id']}"]


async def test_a_failing_listener_is_logged_by_mqtt_and_the_next_message_handled(
    hass: HomeAssistant, satellite: PocketSatellite, caplog: pytest.LogCaptureFixture
) -> None:
    def _fail() -> None:
        raise RuntimeError("listener bug")

    remove = satellite.add_listener("prosody", _fail)
    fire(hass, "prosody", _golden("prosody"))
    await hass.async_block_till_done()
    assert f"when handling msg on '{BASE}/prosody'" in caplog.text
    assert "RuntimeError: listener bug" in caplog.text
    remove()
    calls = _listen(satellite, "prosody")
    fire(hass, "prosody", _golden("prosody"))
    await hass.async_block_till_done()
    assert calls == ["prosody"]


@pytest.mark.parametrize("protocol", [float("inf"), float("nan")])
async def test_a_protocol_that_is_no_number_is_rejected(
    hass: HomeAssistant, satellite: PocketSatellite, protocol: float
) -> None:
    fire(hass, "info", {**_golden("info"), "protocol": protocol})  # JSON Infinity, NaN
    await hass.async_block_till_done()
    assert satellite.rejected == {f"{BASE}/info": 1}
