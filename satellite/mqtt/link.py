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

The link composes the pieces: :class:`~satellite.mqtt.connection.LinkConnection` (paho's
callbacks, retries), :class:`~satellite.mqtt.worker.LinkWorker` (the outbox and every
publish) and :class:`~satellite.mqtt.inbound.Inbound` (validation, the inbox).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from ..events import Event
from .client import LinkStats, MqttConfigError, make_client
from .connection import LinkConnection
from .inbound import Inbound
from .open_alerts import OpenAlerts, open_alerts_path
from .outbox import Outbox
from .payloads import Command, Info
from .settings import MqttSettings
from .topics import INFO, ROUTES, STATUS, Route, Topics
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
        alerts: OpenAlerts | None = None,
    ) -> None:
        self.settings = settings
        self.info = info
        self.inbox = inbox
        self.routes = ROUTES if routes is None else routes
        self.topics = Topics(settings.base_topic, info.id, settings.discovery_prefix)
        self.stats = LinkStats()
        self.connected = threading.Event()
        self._unrouted_logged: set[str] = set()
        self.outbox = Outbox(
            settings.outbox_file, settings.outbox_max_messages, settings.outbox_fsync
        )
        #: The alerts HA has not acknowledged (kept next to the outbox by default).
        if alerts is None:
            alerts = OpenAlerts(open_alerts_path(settings.outbox_file), settings.outbox_fsync)
        self.alerts = alerts
        client = make_client(settings, f"pocket_satellite-{info.id}", self.topics.full(STATUS))
        self._worker = LinkWorker(
            client,
            self.outbox,
            settings,
            info,
            self.topics,
            self.routes,
            self.stats,
            self.connected,
            clock,
            self.alerts,
        )
        inbound = Inbound(
            self.topics, settings.max_payload_bytes, inbox, self.stats, self._worker.put
        )
        self._connection = LinkConnection(
            client,
            settings,
            self.topics,
            self.stats,
            self.connected,
            self._worker.put,
            inbound.on_message,
        )

    def start(self) -> None:
        """Connect in the background; reconnects by themselves until stop()."""
        self._worker.start()
        self._connection.start()

    def stop(self, timeout: float = STOP_TIMEOUT_SECONDS) -> None:
        """Publish ``offline``, disconnect and stop the threads. Undelivered QoS 1
        events stay in the outbox for the next start."""
        self._connection.stopping = True
        if not self._worker.is_alive():
            self.outbox.close()
            return
        self._worker.put(Work("stop"))
        self._worker.join(timeout + 1.0)
        self._connection.close(timeout)
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

    def update_info(self, info: Info) -> None:
        """A new ``info`` (the speech grammar was rebuilt): published now, retained, and
        announced with it on every reconnect."""
        self.info = info
        self._worker.info = info
        self.publish(INFO, info.to_json(), qos=1, retain=True)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every queued event was handled and the outbox is empty."""
        return self._worker.wait_idle(timeout)
