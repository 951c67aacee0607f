"""The link's connection: paho's callbacks on its network thread, retries and their logs.

The callbacks only count, log and queue work for the worker; the link is ready
(``connected`` is set by the worker) once the broker has confirmed the subscriptions, so
commands sent from then on reach the satellite. A failed connect or a lost connection is
retried with exponential backoff and jitter. Each failure is named by its cause (see
:mod:`satellite.mqtt.diagnose`: a certificate's verify reason, TLS and plain crossed, a
refused port, an unknown host; a broker that hangs up before its CONNACK included),
counted in ``LinkStats.failures``, and logged as an error once, then at most once per
``PROBLEM_INTERVAL_SECONDS`` while it lasts.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

from .client import LinkStats, backoff_delay, set_nodelay
from .diagnose import Problem, closed_before_connack, connect_failed
from .settings import MqttSettings
from .topics import INBOUND_TOPICS, OFFLINE, STATUS, Topics
from .worker import Work

_LOGGER = logging.getLogger(__name__)

OnMessage = Callable[[mqtt.Client, Any, mqtt.MQTTMessage], None]

#: A connect problem that lasts is logged again at most this often, s.
PROBLEM_INTERVAL_SECONDS = 60.0


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
        #: The broker answered this attempt's CONNECT (with a CONNACK, even a refusal).
        self._answered = True
        #: When each kind of problem was last logged (monotonic seconds).
        self._problem_logged: dict[str, float] = {}
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
        self._answered = False

    def _on_socket_open(self, client: mqtt.Client, userdata: Any, sock: Any) -> None:
        set_nodelay(sock)

    def _on_connect(
        self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any
    ) -> None:
        self._answered = True
        if reason.is_failure:
            self.stats.refused += 1
            where = f"{self.settings.host}:{self.settings.effective_port}"
            self._problem(
                f"refused:{reason}",
                lambda: Problem(
                    f"refused:{reason}",
                    f"MQTT broker {where} refused the connection: {reason}. Fix: check "
                    "mqtt.username and mqtt.password (or mqtt.password_file) and the "
                    "broker's ACL",
                ),
            )
            return  # the broker closes the socket; _on_disconnect schedules the retry
        self.stats.connects += 1
        self._failures = 0
        self._was_connected = True
        self._problem_logged.clear()
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
        # paho calls this while handling the connect's exception: it names the cause.
        err = sys.exc_info()[1]
        self._problem(type(err).__name__, lambda: connect_failed(self.settings, err))
        self._backoff()

    def _on_disconnect(
        self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any
    ) -> None:
        if self._was_connected and not self.stopping:
            self._was_connected = False
            _LOGGER.warning("Lost the MQTT connection (%s); reconnecting", reason)
        elif not self._answered and not self.stopping:  # hung up before its CONNACK
            self._answered = True
            self._problem("closed_early", lambda: closed_before_connack(self.settings, reason))
        self.connected.clear()
        self._put(Work("disconnected"))
        self._backoff()

    def _on_publish(
        self, client: mqtt.Client, userdata: Any, mid: int, reason: Any, properties: Any
    ) -> None:
        self._put(Work("ack", mid=mid))

    def _problem(self, kind: str, describe: Callable[[], Problem]) -> None:
        """Count a failed attempt; log it (``describe()`` may probe the port) when this
        kind was not logged in the last ``PROBLEM_INTERVAL_SECONDS``."""
        self.stats.failures[kind] = self.stats.failures.get(kind, 0) + 1
        now = time.monotonic()
        last = self._problem_logged.get(kind)
        if last is not None and now - last < PROBLEM_INTERVAL_SECONDS:
            return
        self._problem_logged[kind] = now
        problem = describe()
        _LOGGER.error("%s (retrying, attempt %d)", problem.message, self.stats.connect_attempts)

    def _backoff(self) -> None:
        """Exponential backoff with jitter for the next reconnect."""
        delay = backoff_delay(self.settings, self._failures)
        self._failures += 1
        # paho waits min(previous * 2, max); with both set it waits exactly `delay`.
        self._client.reconnect_delay_set(delay, delay)  # type: ignore[arg-type]  # floats work
