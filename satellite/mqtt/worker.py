"""The link's worker thread: the only one that touches the outbox, and it does every publish.

Work arrives on one queue from every thread (events from the frame loop, connection
changes and acknowledgements from paho's network thread) and is handled in batches, one
outbox transaction each, in order. QoS 1 events are written to the outbox first, handed
to paho while connected, and removed when the broker acknowledges them. After a
reconnect, or a restart, everything still in the outbox is sent again in order. Raw
messages (and events that do not go through the outbox) are dropped while disconnected.
On each connect the worker announces ``online``, the info, the retained events, the open
alerts and the discovery configs.

Each ``help`` and ``alert`` also opens an alert (:mod:`satellite.mqtt.open_alerts`) that
stays open, on the retained ``alert/active``, until Home Assistant acknowledges its id;
an unacknowledged call for help goes through the outbox again on a back-off schedule.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import paho.mqtt.client as mqtt

from ..events import Event
from ..queues import drain
from .client import LinkStats
from .discovery import component_configured, discovery_messages
from .open_alerts import OpenAlerts
from .outbox import Outbox, OutboxMessage
from .payloads import Envelope, Info, encode_event
from .ratelimit import RateLimitedLog
from .settings import MqttSettings
from .topics import ALERT_ACTIVE, INFO, ONLINE, STATUS, Route, Topics

_LOGGER = logging.getLogger(__name__)

#: Events waiting for the worker beyond this are dropped and counted.
MAX_QUEUED_EVENTS = 10000
#: Largest number of work items the worker handles in one outbox transaction.
BATCH_ITEMS = 512
#: After a lost connection, events the broker acknowledged this recently (s) are sent
#: again: Mosquitto acknowledges before it saves its state, so a broker killed in between
#: forgets them for a subscriber that is away. Consumers drop the duplicates by id.
RESEND_ACKED_SECONDS = 2.0
#: Discovery waits this long after a (re)connect for the component's retained
#: ``component`` message, so that a satellite under the component announces nothing, s.
DISCOVERY_DELAY_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class Work:
    """One item for the worker; ``kind`` is event, raw, ack, connected, disconnected,
    ha_online, alert_ack (the alert id in ``topic``), component, discover or stop, and says
    which of the other fields are set."""

    kind: str
    event: Event | None = None
    route: Route | None = None
    topic: str = ""
    payload: bytes = b""
    qos: int = 0
    retain: bool = False
    mid: int = 0


class RecentlyAcked:
    """What the broker acknowledged in the last ``seconds``: sent again after a lost
    connection (Mosquitto acknowledges before it saves)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        #: (monotonic time of the acknowledgement, message), oldest first.
        self._items: deque[tuple[float, OutboxMessage]] = deque()

    def add(self, message: OutboxMessage) -> None:
        now = time.monotonic()
        self._items.append((now, message))
        while self._items and self._items[0][0] < now - self.seconds:
            self._items.popleft()

    def take(self) -> list[OutboxMessage]:
        """The ones still recent, oldest first; forgotten here."""
        cutoff = time.monotonic() - self.seconds
        recent = [m for at, m in self._items if at >= cutoff]
        self._items.clear()
        return recent


class DiscoveryAnnouncer:
    """HA MQTT discovery configs: sent on connect, withdrawn while the HA component is
    configured for this satellite (its retained ``component`` message)."""

    def __init__(
        self,
        settings: MqttSettings,
        info: Info,
        topics: Topics,
        send: Callable[[str, bytes, int, bool], None],
    ) -> None:
        self.settings = settings
        self.info = info
        self.topics = topics
        self.send = send
        #: The HA component is configured for this satellite: no MQTT discovery then.
        self.component_configured = False

    def on_component(self, payload: bytes) -> None:
        """The component appeared (its discovery entities go) or was removed (back)."""
        configured = component_configured(payload)
        if configured == self.component_configured:
            return
        self.component_configured = configured
        if configured:
            _LOGGER.info("The Home Assistant component handles this satellite: no MQTT discovery")
            if self.settings.discovery:
                for topic, _ in discovery_messages(self.topics, self.info):
                    self.send(topic, b"", 1, True)  # an empty retained config removes it
        else:
            self.announce()

    def announce(self) -> None:
        if not self.settings.discovery or self.component_configured:
            return
        for topic, payload in discovery_messages(self.topics, self.info):
            self.send(topic, payload, 1, True)


class LinkWorker:
    """Owns the outbox and publishes through ``client``; see the module docstring."""

    def __init__(
        self,
        client: mqtt.Client,
        outbox: Outbox,
        settings: MqttSettings,
        info: Info,
        topics: Topics,
        routes: dict[str, Route],
        stats: LinkStats,
        connected: threading.Event,
        clock: Callable[[], float],
        alerts: OpenAlerts,
    ) -> None:
        self.outbox = outbox
        self.alerts = alerts
        self.settings = settings
        self.info = info
        self.topics = topics
        self.routes = routes
        self.stats = stats
        self.connected = connected
        self._client = client
        self._clock = clock
        self._work: queue.SimpleQueue[Work] = queue.SimpleQueue()
        self._queued = 0
        self._queued_lock = threading.Lock()
        self._idle = threading.Condition()
        self._log = RateLimitedLog(_LOGGER)
        self._retained: dict[str, Event] = {}
        self._unsent: deque[OutboxMessage] = deque(outbox.messages())
        self._inflight: dict[int, OutboxMessage] = {}
        self._acked = RecentlyAcked(RESEND_ACKED_SECONDS)
        self.discovery = DiscoveryAnnouncer(settings, info, topics, self._send)
        self._thread = threading.Thread(target=self._run, name="mqtt-worker", daemon=True)

    # --- any thread -----------------------------------------------------------------------

    def start(self) -> None:
        """Start the thread; what the outbox holds from before is sent first."""
        if self._unsent:
            _LOGGER.info(
                "MQTT outbox holds %d event(s) from before; sending them first", len(self._unsent)
            )
        self._thread.start()

    def is_alive(self) -> bool:
        """True while the thread runs."""
        return self._thread.is_alive()

    def join(self, timeout: float) -> None:
        """Wait for the thread to end (after a ``stop`` work item)."""
        self._thread.join(timeout)

    def put(self, work: Work) -> None:
        """Queue work for the thread; never blocks."""
        self._work.put(work)

    def put_event(self, event: Event, route: Route) -> None:
        """Queue an event to publish by ``route``; dropped and counted when the worker is
        ``MAX_QUEUED_EVENTS`` behind. Never blocks."""
        with self._queued_lock:
            if self._queued >= MAX_QUEUED_EVENTS:
                self.stats.queue_full_dropped += 1
                full = True
            else:
                self._queued += 1
                full = False
        if full:
            self._log.report(
                "queue",
                "MQTT worker is %d events behind; dropping %s",
                MAX_QUEUED_EVENTS,
                event.type_name,
            )
            return
        self._work.put(Work("event", event=event, route=route))

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every queued event was handled and the outbox is empty."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._queued or len(self.outbox) or not self._work.empty():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(min(remaining, 0.1))
        return True

    # --- the worker thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                # Wake up for the next re-send of an unacknowledged call for help (while
                # disconnected the outbox and alert/active carry it on the next connect).
                wait = self.alerts.seconds_to_next(self._clock())
                try:
                    first = [self._work.get(timeout=wait if self.connected.is_set() else None)]
                except queue.Empty:
                    first = []
                items = [*first, *drain(self._work, BATCH_ITEMS - 1)]
                if not self._handle_batch(items):
                    return
        except Exception:  # thread boundary: say so loudly; the outbox keeps the events
            _LOGGER.exception("MQTT worker stopped by an unexpected error")

    def _handle_batch(self, items: list[Work]) -> bool:
        outgoing: list[Work | OutboxMessage] = []
        keep_running = True
        with self.outbox.batch():
            for work in items:
                if work.kind == "event":
                    outgoing.extend(self._prepare_event(work))
                elif work.kind == "ack":
                    self.stats.acknowledged += 1
                    message = self._inflight.pop(work.mid, None)
                    if message is not None:
                        self.outbox.remove(message.seq)
                        self._acked.add(message)
                elif work.kind == "raw":
                    outgoing.append(work)
                elif work.kind == "connected":
                    # Raw messages queued while disconnected are stale: drop them.
                    stale = [m for m in outgoing if not isinstance(m, OutboxMessage)]
                    self.stats.not_connected_dropped += len(stale)
                    outgoing = [m for m in outgoing if isinstance(m, OutboxMessage)]
                    self.connected.set()
                    self._announce()
                elif work.kind == "disconnected":
                    self._requeue_inflight()
                elif work.kind == "ha_online":
                    self.discovery.announce()
                elif work.kind == "alert_ack":
                    self.alerts.ack(work.topic)
                elif work.kind == "component":
                    self.discovery.on_component(work.payload)
                elif work.kind == "discover":
                    self.discovery.announce()
                elif work.kind == "stop":
                    keep_running = False
            for path, payload in self.alerts.due(self._clock()) if self.connected.is_set() else ():
                outgoing.append(self._append(self.topics.full(path), payload))
            if self.alerts.changed:
                outgoing.append(self._active_alerts())
        if self.connected.is_set():
            for item in outgoing:
                if isinstance(item, OutboxMessage):
                    self._flush(upto=item.seq)
                else:
                    self._send(item.topic, item.payload, item.qos, item.retain)
            self._flush()
        else:
            self.stats.not_connected_dropped += sum(
                1 for m in outgoing if not isinstance(m, OutboxMessage)
            )
        # Events count as queued until their batch is done, so wait_idle cannot slip in
        # between an event leaving the queue and its alert opening or outbox row landing.
        events = sum(1 for work in items if work.kind == "event")
        with self._queued_lock:
            self._queued -= events
        with self._idle:
            self._idle.notify_all()
        return keep_running

    def _prepare_event(self, work: Work) -> list[Work | OutboxMessage]:
        assert work.event is not None and work.route is not None
        event, route = work.event, work.route
        alert_id = self.alerts.new_id(event.type_name)
        envelope = Envelope(id=alert_id or uuid.uuid4().hex, time=round(self._clock(), 6))
        redact = () if self.settings.publish_transcripts else route.redact
        payload = encode_event(event, envelope, redact)
        topic = self.topics.full(route.topic)
        if route.retain:
            self._retained[route.topic] = event
        if not route.durable:
            return [Work("raw", topic=topic, payload=payload, qos=route.qos, retain=route.retain)]
        if alert_id is not None:
            self.alerts.open(event.type_name, route.topic, alert_id, envelope.time, payload)
        return [self._append(topic, payload)]

    def _append(self, topic: str, payload: bytes) -> OutboxMessage:
        message, dropped = self.outbox.append(topic, payload)
        if dropped:
            gone = set(dropped)
            self._unsent = deque(m for m in self._unsent if m.seq not in gone)
            for mid in [mid for mid, m in self._inflight.items() if m.seq in gone]:
                del self._inflight[mid]
            self._log.report(
                "outbox_full",
                "MQTT outbox is full (%d): dropped the %d oldest event(s), %d dropped in all",
                self.outbox.max_messages,
                len(dropped),
                self.outbox.dropped_total,
            )
        self._unsent.append(message)
        return message

    def _active_alerts(self) -> Work:
        payload = self.alerts.active(self._clock()).to_json()
        return Work(
            "raw", topic=self.topics.full(ALERT_ACTIVE), payload=payload, qos=1, retain=True
        )

    def _flush(self, upto: int | None = None) -> None:
        while self._unsent and (upto is None or self._unsent[0].seq <= upto):
            if not self.connected.is_set():
                return
            message = self._unsent[0]
            info = self._client.publish(message.topic, message.payload, qos=1)
            if info.rc == mqtt.MQTT_ERR_QUEUE_SIZE:
                return
            self._unsent.popleft()
            self._inflight[info.mid] = message
            self.stats.published += 1

    def _requeue_inflight(self) -> None:
        """After a lost connection: what was in flight, and what the broker acknowledged
        in the last ``RESEND_ACKED_SECONDS``, goes out again first, in order."""
        self.connected.clear()
        recent = self._acked.take()
        if self._inflight or recent:
            again = {m.seq: m for m in [*recent, *self._inflight.values(), *self._unsent]}
            self._unsent = deque(sorted(again.values(), key=lambda m: m.seq))
            self._inflight.clear()

    def _send(self, topic: str, payload: bytes, qos: int, retain: bool) -> None:
        info = self._client.publish(topic, payload, qos=qos, retain=retain)
        if info.rc == mqtt.MQTT_ERR_SUCCESS:
            self.stats.published += 1
        else:
            self.stats.not_connected_dropped += 1

    def _announce(self) -> None:
        self._send(self.topics.full(STATUS), ONLINE.encode(), 1, True)
        self._send(self.topics.full(INFO), self.info.to_json(), 1, True)
        for path, event in self._retained.items():
            envelope = Envelope(id=uuid.uuid4().hex, time=round(self._clock(), 6))
            route = self.routes[event.type_name]
            self._send(self.topics.full(path), encode_event(event, envelope), route.qos, True)
        active = self._active_alerts()
        self._send(active.topic, active.payload, active.qos, active.retain)
        later = threading.Timer(DISCOVERY_DELAY_SECONDS, self.put, (Work("discover"),))
        later.daemon = True
        later.start()
