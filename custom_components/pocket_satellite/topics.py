"""The JSON topics the satellite publishes, one row each, and what a message on each does.

PocketSatellite subscribes to every row and handles each message the same way (see
TopicRow); what differs between topics is declared here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .const import EVENT_ALERT, EVENT_ALERT_CLEARED, EVENT_HELP
from .messages import (
    ActiveAlerts,
    AlertClearedMessage,
    AlertMessage,
    EnrolmentMessage,
    HelpMessage,
    IntentMessage,
    MetricsMessage,
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
    opens_alert: bool = False
    """An alert the satellite keeps open until ``alert/ack``: handled once per id, also
    across restarts (device.FiredAlerts), then acknowledged."""
    retained: bool = False
    """The satellite publishes it retained: the contract in tests/golden/, checked by the
    tests; handling does not depend on it."""
    fire: Hook[T] | None = None
    """Before the listeners are told: fire a bus event about it."""
    hand_off: Hook[T] | None = None
    """After the listeners are told: give it to whoever waits for it."""


def _fire_help(satellite: PocketSatellite, help_request: HelpMessage) -> None:
    """Fire EVENT_HELP, for the automations that alert a caregiver; ``time`` is when
    help was asked for (Unix s), however late it arrives."""
    satellite.hass.bus.async_fire(
        EVENT_HELP,
        {
            **satellite.event_data,
            "severity": help_request.severity,
            "utterance_id": help_request.utterance_id,
            "id": help_request.id,
            "time": help_request.time,
        },
    )


def _fire_alert(satellite: PocketSatellite, alert: AlertMessage) -> None:
    """Fire EVENT_ALERT (rushed speech), with the alert's id and original time."""
    satellite.hass.bus.async_fire(
        EVENT_ALERT,
        {
            **satellite.event_data,
            "kind": alert.kind,
            "severity": alert.severity,
            "ratio": alert.ratio,
            "utterance_id": alert.utterance_id,
            "id": alert.id,
            "time": alert.time,
        },
    )


def _fire_cleared(satellite: PocketSatellite, cleared: AlertClearedMessage) -> None:
    """Fire EVENT_ALERT_CLEARED: the speaker is calm again."""
    satellite.hass.bus.async_fire(
        EVENT_ALERT_CLEARED, {**satellite.event_data, "kind": cleared.kind, "id": cleared.id}
    )


def _deliver_active(satellite: PocketSatellite, active: ActiveAlerts) -> None:
    """Handle each open alert as if it came on its own topic: fired once per id."""
    for alert in active.alerts:
        satellite.handle(ROWS_BY_PATH[alert.source], alert.message)


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
    TopicRow(
        path="alert",
        parse=AlertMessage.parse,
        keep="last_alert",
        kind="alert",
        dedupe=True,
        opens_alert=True,
        fire=_fire_alert,
    ),
    TopicRow(
        path="alert/cleared",
        parse=AlertClearedMessage.parse,
        keep="last_alert_cleared",
        kind="alert_cleared",
        dedupe=True,
        fire=_fire_cleared,
    ),
    TopicRow(
        path="help",
        parse=HelpMessage.parse,
        keep="last_help",
        kind="help",
        dedupe=True,
        opens_alert=True,
        fire=_fire_help,
    ),
    TopicRow(
        path="alert/active", parse=ActiveAlerts.parse, retained=True, hand_off=_deliver_active
    ),
    TopicRow(path="prosody", parse=ProsodyMessage.parse, keep="last_prosody", kind="prosody"),
    TopicRow(path="say/done", parse=SayDoneMessage.parse, hand_off=_finish_say),
    TopicRow(
        path="enrolment",
        parse=EnrolmentMessage.parse,
        keep="last_enrolment",
        kind="enrolment",
    ),
    TopicRow(path="metrics", parse=MetricsMessage.parse, keep="metrics", retained=True),
)

#: The rows by path (``alert/active`` names each alert's source row).
ROWS_BY_PATH: Final = {row.path: row for row in TOPICS}
