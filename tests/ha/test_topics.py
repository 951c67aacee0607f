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
from custom_components.pocket_satellite.messages import (
    AlertClearedMessage,
    AlertMessage,
    HelpMessage,
    IntentMessage,
    ProsodyMessage,
    SatelliteInfo,
    SayDoneMessage,
    parse_state,
)

from .conftest import BASE, example, fire

pytestmark = pytest.mark.parametrize("expected_lingering_timers", [True])
DEVICE_LOGGER = "custom_components.pocket_satellite.device"

#: (path, parser, attribute that keeps the value, listener kind, redeliveries dropped)
ROWS: list[tuple[str, Any, str | None, str | None, bool]] = [
    ("info", SatelliteInfo.parse, "info", "info", False),
    ("state", parse_state, "state", "state", False),
    ("intent", IntentMessage.parse, "last_intent", "intent", True),
    ("alert", AlertMessage.parse, "last_alert", "alert", True),
    ("alert/cleared", AlertClearedMessage.parse, "last_alert_cleared", "alert_cleared", True),
    ("help", HelpMessage.parse, "last_help", "help", True),
    ("prosody", ProsodyMessage.parse, "last_prosody", "prosody", False),
    ("say/done", SayDoneMessage.parse, None, None, False),
]
IDS = [row[0] for row in ROWS]


@pytest.fixture
def satellite(setup_entry: MockConfigEntry) -> PocketSatellite:
    """The set-up kitchen satellite."""
    satellite: PocketSatellite = setup_entry.runtime_data.satellite
    return satellite


def _count(satellite: PocketSatellite, kind: str | None) -> list[str]:
    calls: list[str] = []
    if kind is not None:
        satellite.add_listener(kind, lambda: calls.append(kind))
    return calls


def _golden(path: str) -> dict[str, Any]:
    return dict(example(path.replace("/", "_")))


async def test_every_topic_is_subscribed_in_order(
    satellite: PocketSatellite, mqtt_mock: MagicMock
) -> None:
    calls = [c for c in mqtt_mock.async_subscribe.call_args_list if c.args[0].startswith(BASE)]
    assert [(c.args[0], c.args[2], c.args[3]) for c in calls] == [
        (f"{BASE}/status", 1, "utf-8"),
        *((f"{BASE}/{path}", 1, "utf-8") for path in IDS),
        (f"{BASE}/tts/response/+", 1, None),
    ]
    # Every handler runs inline in the event loop, never in the executor.
    for c in calls:
        assert get_hassjob_callable_job_type(c.args[1]) is HassJobType.Callback


@pytest.mark.parametrize(("path", "parse", "attribute", "kind", "dedupe"), ROWS, ids=IDS)
async def test_a_good_payload_is_kept_and_told(
    hass: HomeAssistant,
    satellite: PocketSatellite,
    path: str,
    parse: Any,
    attribute: str | None,
    kind: str | None,
    dedupe: bool,
) -> None:
    calls = _count(satellite, kind)
    payload = _golden(path)
    fire(hass, path, payload)
    fire(hass, path, payload)  # a QoS 1 redelivery: the same id again
    await hass.async_block_till_done()
    if attribute is not None:
        assert getattr(satellite, attribute) == parse(payload)
    assert len(calls) == (0 if kind is None else 1 if dedupe else 2)
    assert satellite.rejected == {}


@pytest.mark.parametrize(("path", "parse", "attribute", "kind", "dedupe"), ROWS, ids=IDS)
async def test_a_bad_payload_is_rejected_and_logged_once(
    hass: HomeAssistant,
    satellite: PocketSatellite,
    caplog: pytest.LogCaptureFixture,
    path: str,
    parse: Any,
    attribute: str | None,
    kind: str | None,
    dedupe: bool,
) -> None:
    caplog.set_level(logging.DEBUG, logger=DEVICE_LOGGER)
    calls = _count(satellite, kind)
    before = None if attribute is None else getattr(satellite, attribute)
    for payload in ("{not json", "[1, 2]", "{}"):
        fire(hass, path, payload)
    await hass.async_block_till_done()
    topic = f"{BASE}/{path}"
    assert satellite.rejected == {topic: 3}
    assert calls == []
    if attribute is not None:
        assert getattr(satellite, attribute) == before
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
        "satellite_id": "kitchen",
        "severity": help_request["severity"],
        "utterance_id": help_request["utterance_id"],
        "id": help_request["id"],
    }
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
