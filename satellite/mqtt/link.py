"""The satellite's MQTT link: events out (through the outbox), commands in.

Three threads meet here. The frame loop calls :meth:`MqttLink.publish_event` (never
blocks). paho's network thread runs the connection and its callbacks only put work on a
queue. The link's own worker thread owns the outbox and does every publish, in order:
QoS 1 events are written to the outbox first, handed to paho while connected, and
removed when the broker acknowledges them. After a reconnect, or a restart, everything
still in the outbox is sent again in order, so consumers see each event at least once
and drop duplicates by the payload's ``id``.

Incoming payloads are validated on the network thread; valid commands go to the
bounded ``inbox`` the frame loop drains, invalid ones are counted and logged
(rate-limited) and never acted on.

The outbox and every publish belong to :class:`~satellite.mqtt.worker.LinkWorker`;
validation and the inbox to :class:`~satellite.mqtt.inbound.Inbound`.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

from ..events import Event
from .client import LinkStats, MqttConfigError, backoff_delay, make_client, set_nodelay
from .inbound import Inbound
from .outbox import Outbox
from .payloads import Command, Info
from .settings import MqttSettings
from .topics import INBOUND_TOPICS, OFFLINE, ROUTES, STATUS, Route, Topics
from .worker import LinkWorker, Work

__all__ = ["LinkStats", "MqttConfigError", "MqttLink"]

_LOGGER = logging.getLogger(__name__)

#: How long a clean stop waits for ``offline`` to be acknowledged, s.
STOP_TIMEOUT_SECONDS = 2.0


class MqttLink:
    """MQTT for one satellite: start(), publish_event()/publish(), stop()."""

    def __init__(
        self,
        settings: MqttSettings,
        info: Info,
        inbox: queue.Queue[Command],
        routes: dict[str, Route] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.info = info
        self.inbox = inbox
        self.routes = ROUTES if routes is None else routes
        self.topics = Topics(settings.base_topic, info.id, settings.discovery_prefix)
        self.stats = LinkStats()
        self.connected = threading.Event()
        self._unrouted_logged: set[str] = set()
        self._failures = 0
        self._subscribe_mid: int | None = None
        self._stopping = False
        self._was_connected = False
        self._problem_logged: str | None = None
        self.outbox = Outbox(
            settings.outbox_file, settings.outbox_max_messages, settings.outbox_fsync
        )
        self._client = self._make_client()
        self._worker = LinkWorker(
            self._client,
            self.outbox,
            settings,
            info,
            self.topics,
            self.routes,
            self.stats,
            self.connected,
            clock,
        )
        inbound = Inbound(
            self.topics, settings.max_payload_bytes, inbox, self.stats, self._worker.put
        )
        self._client.on_message = inbound.on_message

    # --- public API (any thread) ------------------------------------------------------

    def start(self) -> None:
        """Connect in the background; reconnects by themselves until stop()."""
        s = self.settings
        self._worker.start()
        self._client.connect_async(s.host, s.effective_port, s.keepalive_seconds)
        self._client.loop_start()

    def stop(self, timeout: float = STOP_TIMEOUT_SECONDS) -> None:
        """Publish ``offline``, disconnect and stop the threads. Undelivered QoS 1
        events stay in the outbox for the next start."""
        self._stopping = True
        if not self._worker.is_alive():
            self.outbox.close()
            return
        self._put(Work("stop"))
        self._worker.join(timeout + 1.0)
        if self.connected.is_set():
            info = self._client.publish(self.topics.full(STATUS), OFFLINE, qos=1, retain=True)
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(timeout)
        self._client.disconnect()
        self._client.loop_stop()
        self.outbox.close()

    def publish_event(self, event: Event) -> None:
        """Publish an event by its route; never blocks the caller."""
        route = self.routes.get(event.type_name)
        if route is None:
            self.stats.unrouted += 1
            if event.type_name not in self._unrouted_logged:
                self._unrouted_logged.add(event.type_name)
                _LOGGER.debug("No MQTT route for event type %r; not published", event.type_name)
            return
        if route.private and not self.settings.publish_transcripts:
            self.stats.private_skipped += 1
            return
        self._worker.put_event(event, route)

    def publish(self, path: str, payload: bytes | str, qos: int = 0, retain: bool = False) -> None:
        """Publish raw bytes under the base topic (say/done, tts/response/<id>, ...)."""
        data = payload.encode() if isinstance(payload, str) else payload
        work = Work("raw", topic=self.topics.full(path), payload=data, qos=qos, retain=retain)
        self._worker.put(work)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every queued event was handled and the outbox is empty."""
        return self._worker.wait_idle(timeout)

    # --- paho callbacks (network thread): only queue work -------------------------------

    def _make_client(self) -> mqtt.Client:
        client = make_client(
            self.settings, f"pocket_satellite-{self.info.id}", self.topics.full(STATUS)
        )
        client.on_pre_connect = self._on_pre_connect
        client.on_socket_open = self._on_socket_open
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        return client

    def _on_pre_connect(self, client: mqtt.Client, userdata: Any) -> None:
        self.stats.connect_attempts += 1

    def _on_socket_open(self, client: mqtt.Client, userdata: Any, sock: Any) -> None:
        set_nodelay(sock)

    def _on_connect(
        self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any
    ) -> None:
        if reason.is_failure:
            self.stats.refused += 1
            self._problem(
                f"refused:{reason}",
                "MQTT broker %s:%d refused the connection: %s. Fix: check mqtt.username and "
                "mqtt.password (or mqtt.password_file) and the broker's ACL; retrying",
                self.settings.host,
                self.settings.effective_port,
                reason,
            )
            return  # the broker closes the socket; _on_disconnect schedules the retry
        self.stats.connects += 1
        self._failures = 0
        self._was_connected = True
        self._problem_logged = None
        _LOGGER.info(
            "Connected to MQTT broker %s:%d", self.settings.host, self.settings.effective_port
        )
        topics = [(self.topics.full(path), 1) for path in INBOUND_TOPICS]
        _, self._subscribe_mid = client.subscribe([*topics, (self.topics.ha_status, 0)])

    def _on_subscribe(
        self, client: mqtt.Client, userdata: Any, mid: int, reasons: Any, properties: Any
    ) -> None:
        # Ready only once the broker has our subscriptions: commands sent from now on
        # reach us.
        if mid == self._subscribe_mid:
            self._put(Work("connected"))

    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        tls = " and the TLS settings (mqtt.tls_ca_file)" if self.settings.use_tls else ""
        self._problem(
            "unreachable",
            "Cannot connect to MQTT broker %s:%d. Fix: check mqtt.host, mqtt.port%s and that "
            "the broker runs; retrying with backoff",
            self.settings.host,
            self.settings.effective_port,
            tls,
        )
        self._backoff()

    def _on_disconnect(
        self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any
    ) -> None:
        if self._was_connected and not self._stopping:
            self._was_connected = False
            _LOGGER.warning("Lost the MQTT connection (%s); reconnecting", reason)
        self.connected.clear()
        self._put(Work("disconnected"))
        self._backoff()

    def _on_publish(
        self, client: mqtt.Client, userdata: Any, mid: int, reason: Any, properties: Any
    ) -> None:
        self._put(Work("ack", mid=mid))

    def _problem(self, key: str, message: str, *args: Any) -> None:
        if self._problem_logged == key:
            _LOGGER.debug(message, *args)
            return
        self._problem_logged = key
        _LOGGER.error(message, *args)

    def _backoff(self) -> None:
        """Exponential backoff with jitter for the next reconnect."""
        delay = backoff_delay(self.settings, self._failures)
        self._failures += 1
        # paho waits min(previous * 2, max); with both set it waits exactly `delay`.
        self._client.reconnect_delay_set(delay, delay)  # type: ignore[arg-type]  # floats work

    def _put(self, work: Work) -> None:
        self._worker.put(work)
