"""What arrives from the broker: validated on paho's network thread, then handed on.

A valid command goes to the bounded ``inbox`` the frame loop drains; an invalid one (a
topic that is not this satellite's, a payload that does not decode, a full inbox) is
counted per topic in ``LinkStats.rejected`` and logged (rate-limited), never acted on; a
rejected ``say`` or ``tts/request`` that names a usable id is answered with a failed
``say/done`` or ``tts/response/<id>`` giving the reason, so its requester need not wait.
Home Assistant announcing ``online`` queues the discovery configs again; the component's
retained ``component`` topic turns them off (see discovery.py).

Commands that act (``ACTING``) are never taken from a retained message: one left on the
broker (a ``control`` mute published with retain) would otherwise act again after every
restart. Only ``slots``, a state HA keeps up to date, is meant to be retained.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

from .client import LinkStats
from .media import decode_play
from .payloads import AlertAck, Command, PayloadError, decode_inbound, rejection_answer
from .ratelimit import RateLimitedLog
from .topics import ONLINE, Topics
from .worker import Work

_LOGGER = logging.getLogger(__name__)

#: Longest reason logged or answered for a rejection (a payload's field names may be long).
MAX_REASON_CHARS = 200
#: Inbound paths whose commands act; a retained one is rejected, not acted on.
ACTING = frozenset({"control", "say", "response", "tts/request", "alert/ack", "enrol"})


class Inbound:
    """Validates incoming payloads and puts the commands in ``inbox``; never raises."""

    def __init__(
        self,
        topics: Topics,
        max_payload_bytes: int,
        inbox: queue.Queue[Command],
        stats: LinkStats,
        put: Callable[[Work], None],
    ) -> None:
        self.topics = topics
        self.max_payload_bytes = max_payload_bytes
        self.inbox = inbox
        self.stats = stats
        self._put = put
        self._log = RateLimitedLog(_LOGGER)

    def on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        """paho's ``on_message``: a payload must never kill the network thread."""
        try:
            self.receive(message.topic, bytes(message.payload), retained=bool(message.retain))
        except Exception:  # noqa: BLE001 - paho's network thread: a payload must never kill it
            self._log.log(
                logging.ERROR, "crash", "Unexpected error handling %r", message.topic, exc_info=True
            )

    def receive(self, topic: str, payload: bytes, retained: bool = False) -> None:
        """Handle one message: a command for the inbox, HA's status, or a rejection.

        ``retained``: the broker delivered a stored retained message (paho's
        ``msg.retain``), not one published while subscribed."""
        if topic == self.topics.ha_status:
            if payload == ONLINE.encode():
                self._put(Work("ha_online"))
            return
        if topic == self.topics.component:  # retained: the component's presence
            self._put(Work("component", payload=payload))
            return
        play_id = self.topics.play_id(topic)
        path = "play" if play_id is not None else self.topics.inbound_path(topic)
        if path is None:
            self._reject(topic, "not a topic of this satellite")
            return
        if retained and (path in ACTING or play_id is not None):
            self._reject(
                path,
                "a retained command is never acted on (it would act again after every "
                "restart). Fix: publish it with retain off, and clear the stored one with an "
                "empty retained message",
            )
            return
        if play_id is not None:  # binary WAV, not JSON
            self._accept("play", lambda: decode_play(play_id, payload))
            return
        try:
            command = decode_inbound(path, payload, self.max_payload_bytes)
        except PayloadError as err:
            why = (
                str(err) if len(str(err)) <= MAX_REASON_CHARS else f"{str(err)[:MAX_REASON_CHARS]}…"
            )
            self._reject(path, why)
            answer = rejection_answer(path, payload, why)
            if answer is not None:  # the requester learns why rather than waiting
                answer_path, body = answer
                self._put(Work("raw", topic=self.topics.full(answer_path), payload=body, qos=1))
            return
        if isinstance(command, AlertAck):  # the link closes the alert; not for the frame loop
            self._put(Work("alert_ack", topic=command.id))
            self.stats.accepted += 1
            return
        self._enqueue(path, command)

    def _accept(self, key: str, decode: Callable[[], Command]) -> None:
        try:
            command = decode()
        except PayloadError as err:
            self._reject(key, str(err))
            return
        self._enqueue(key, command)

    def _enqueue(self, key: str, command: Command) -> None:
        """Hand a valid command to the frame loop (rejected when its inbox is full)."""
        try:
            self.inbox.put_nowait(command)
        except queue.Full:
            self._reject(key, "the command inbox is full")
            return
        self.stats.accepted += 1

    def _reject(self, key: str, why: str) -> None:
        self.stats.rejected[key] = self.stats.rejected.get(key, 0) + 1
        self._log.report(key, "Rejected MQTT payload on %s: %s", key, why)
