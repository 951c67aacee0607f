"""What arrives from the broker: validated on paho's network thread, then handed on.

A valid command goes to the bounded ``inbox`` the frame loop drains; an invalid one (a
topic that is not this satellite's, a payload that does not decode, a full inbox) is
counted per topic in ``LinkStats.rejected`` and logged (rate-limited), never acted on.
Home Assistant announcing ``online`` queues the discovery configs again; the component's
retained ``component`` topic turns them off (see discovery.py).
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

from .client import LinkStats
from .media import decode_play
from .payloads import Command, PayloadError, decode_inbound
from .ratelimit import RateLimitedLog
from .topics import ONLINE, Topics
from .worker import Work

_LOGGER = logging.getLogger(__name__)


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
            self.receive(message.topic, bytes(message.payload))
        except Exception:  # noqa: BLE001 - paho's network thread: a payload must never kill it
            self._log.log(
                logging.ERROR, "crash", "Unexpected error handling %r", message.topic, exc_info=True
            )

    def receive(self, topic: str, payload: bytes) -> None:
        """Handle one message: a command for the inbox, HA's status, or a rejection."""
        if topic == self.topics.ha_status:
            if payload == ONLINE.encode():
                self._put(Work("ha_online"))
            return
        if topic == self.topics.component:  # retained: the component's presence
            self._put(Work("component", payload=payload))
            return
        play_id = self.topics.play_id(topic)
        if play_id is not None:  # binary WAV, not JSON
            self._accept("play", lambda: decode_play(play_id, payload))
            return
        path = self.topics.inbound_path(topic)
        if path is None:
            self._reject(topic, "not a topic of this satellite")
            return
        try:
            command = decode_inbound(path, payload, self.max_payload_bytes)
        except PayloadError as err:
            self._reject(path, str(err))
            return
        try:
            self.inbox.put_nowait(command)
        except queue.Full:
            self._reject(path, "the command inbox is full")
            return
        self.stats.accepted += 1

    def _accept(self, key: str, decode: Callable[[], Command]) -> None:
        try:
            command = decode()
        except PayloadError as err:
            self._reject(key, str(err))
            return
        try:
            self.inbox.put_nowait(command)
        except queue.Full:
            self._reject(key, "the command inbox is full")
            return
        self.stats.accepted += 1

    def _reject(self, key: str, why: str) -> None:
        self.stats.rejected[key] = self.stats.rejected.get(key, 0) + 1
        self._log.report(key, "Rejected MQTT payload on %s: %s", key, why)
