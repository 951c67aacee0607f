"""The link's connection: paho's callbacks on its network thread, retries and their logs.

The callbacks only count, log and queue work for the worker; the link is ready
(``connected`` is set by the worker) once the broker has confirmed the subscriptions, so
commands sent from then on reach the satellite. A failed connect or a lost connection is
retried with exponential backoff and jitter; the same problem is logged as an error once,
then at debug level until a connect succeeds.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

from .client import LinkStats, backoff_delay, set_nodelay
from .settings import MqttSettings
from .topics import INBOUND_TOPICS, OFFLINE, STATUS, Topics
from .worker import Work

_LOGGER = logging.getLogger(__name__)

OnMessage = Callable[[mqtt.Client, Any, mqtt.MQTTMessage], None]


class LinkConnection:
    """Connects ``client`` in the background and keeps it connected until ``close()``."""

    def __init__(
        self,
        client: mqtt.Client,
        settings: MqttSettings,
        topics: Topics,
        stats: LinkStats,
        connected: threading.Event,
        put: Callable[[Work], None],
        on_message: OnMessage,
    ) -> None:
        self.settings = settings
        self.topics = topics
        self.stats = stats
        self.connected = connected
        #: Set when the link stops: a disconnect is then expected, not a loss.
        self.stopping = False
        self._client = client
        self._put = put
        self._failures = 0
        self._subscribe_mid: int | None = None
        self._was_connected = False
        self._problem_logged: str | None = None
        client.on_pre_connect = self._on_pre_connect
        client.on_socket_open = self._on_socket_open
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        client.on_message = on_message

    def start(self) -> None:
        """Connect in the background; reconnects by themselves until close()."""
        s = self.settings
        self._client.connect_async(s.host, s.effective_port, s.keepalive_seconds)
        self._client.loop_start()

    def close(self, timeout: float) -> None:
        """Publish ``offline`` (waiting up to ``timeout`` for the broker) when connected,
        disconnect and stop the network thread."""
        if self.connected.is_set():
            info = self._client.publish(self.topics.full(STATUS), OFFLINE, qos=1, retain=True)
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(timeout)
        self._client.disconnect()
        self._client.loop_stop()

    # --- paho callbacks (network thread): only queue work -------------------------------

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
        others = [
            (self.topics.ha_status, 0),
            (self.topics.component, 1),
            (self.topics.full("play/+"), 1),
        ]
        _, self._subscribe_mid = client.subscribe([*topics, *others])

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
        if self._was_connected and not self.stopping:
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
