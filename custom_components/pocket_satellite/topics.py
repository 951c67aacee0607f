"""The JSON topics the satellite publishes, one row each, and what a message on each does.

PocketSatellite subscribes to every row and handles each message the same way (see
TopicRow); what differs between topics is declared here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .const import EVENT_HELP
from .messages import (
    AlertClearedMessage,
    AlertMessage,
    HelpMessage,
    IntentMessage,
    ProsodyMessage,
    SatelliteInfo,
    SayDoneMessage,
    parse_state,
)

if TYPE_CHECKING:
    from .device import PocketSatellite

type Hook[T] = Callable[[PocketSatellite, T], None]


@dataclass(frozen=True, kw_only=True)
class TopicRow[T]:
    """A JSON topic and what a message on it does.

    In order: the payload is parsed (a bad one is counted, logged and dropped), a QoS 1
    redelivery dropped, the value kept, ``fire`` run, the listeners told, ``hand_off`` run.
    """

    path: str
    """Under the satellite's base topic."""
    parse: Callable[[dict[str, Any]], T]
    """Checks a JSON object and builds the value (messages.py); raises MessageError."""
    keep: str | None = None
    """The PocketSatellite attribute that keeps the latest value."""
    kind: str | None = None
    """The listeners told once it is kept (device.KINDS)."""
    dedupe: bool = False
    """Drop a redelivery: a message whose ``id`` is among the last SEEN_IDS seen."""
    retained: bool = False
    """The satellite publishes it retained: the contract in tests/golden/, checked by the
    tests; handling does not depend on it."""
    fire: Hook[T] | None = None
    """Before the listeners are told: fire a bus event about it."""
    hand_off: Hook[T] | None = None
    """After the listeners are told: give it to whoever waits for it."""


def _fire_help(satellite: PocketSatellite, help_request: HelpMessage) -> None:
    """Fire EVENT_HELP, for the automations that alert a caregiver."""
    satellite.hass.bus.async_fire(
        EVENT_HELP,
        {
            "satellite_id": satellite.satellite_id,
            "severity": help_request.severity,
            "utterance_id": help_request.utterance_id,
            "id": help_request.id,
        },
    )


def _run_intent(satellite: PocketSatellite, intent: IntentMessage) -> None:
    """Start the intent handler (the IntentBridge) on it."""
    if satellite.intent_handler is not None:
        satellite.hass.async_create_task(satellite.intent_handler(intent), eager_start=True)


def _finish_say(satellite: PocketSatellite, done: SayDoneMessage) -> None:
    """Answer the async_say that waits for it."""
    satellite.finish_say(done)


#: Subscribed in this order, between ``status`` and ``tts/response/+`` (their payloads are
#: not JSON objects: PocketSatellite handles those two itself).
TOPICS: Final = (
    TopicRow(path="info", parse=SatelliteInfo.parse, keep="info", kind="info", retained=True),
    TopicRow(path="state", parse=parse_state, keep="state", kind="state", retained=True),
    TopicRow(
        path="intent",
        parse=IntentMessage.parse,
        keep="last_intent",
        kind="intent",
        dedupe=True,
        hand_off=_run_intent,
    ),
    TopicRow(path="alert", parse=AlertMessage.parse, keep="last_alert", kind="alert", dedupe=True),
    TopicRow(
        path="alert/cleared",
        parse=AlertClearedMessage.parse,
        keep="last_alert_cleared",
        kind="alert_cleared",
        dedupe=True,
    ),
    TopicRow(
        path="help",
        parse=HelpMessage.parse,
        keep="last_help",
        kind="help",
        dedupe=True,
        fire=_fire_help,
    ),
    TopicRow(path="prosody", parse=ProsodyMessage.parse, keep="last_prosody", kind="prosody"),
    TopicRow(path="say/done", parse=SayDoneMessage.parse, hand_off=_finish_say),
)
