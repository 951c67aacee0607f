"""How a satellite is doing, in numbers: counters and gauges for a fleet of Pis.

``Metrics`` counts what the frame loop sees (10 ms frames, loop lag) through ``watch`` and the
events it publishes through ``MetricsSink`` (wakes, utterances, intents by source, not
understood, help requests, alerts, stage errors), and reads the rest where it is kept:
capture and playback xruns and dropped chunks on the audio devices, the outbox depth and
reconnects on the MQTT link, CPU time and RSS from the kernel. ``tick`` publishes a
snapshot, retained, every ``interval_seconds`` (``metrics`` topic); ``prometheus_text``
renders the same snapshot for a scraper (``serve_prometheus``).
"""

from __future__ import annotations

import collections
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

import numpy as np

from ..audio.chunk import AudioChunk
from ..errors import SatelliteError
from ..event_base import Event
from .settings import MetricsSettings

_LOGGER = logging.getLogger(__name__)
#: Loop lags kept for the percentiles of one reporting interval.
LAG_WINDOW = 6000
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


class EventSink(Protocol):
    def publish_event(self, event: Event) -> None: ...


class Publish(Protocol):
    def __call__(
        self, path: str, payload: bytes | str, qos: int = 0, retain: bool = False
    ) -> None: ...


#: Events counted, by type name -> counter name (intents are counted apart).
_COUNTED = {
    "wake_detected": "wakes",
    "utterance_ended": "utterances",
    "help_requested": "help_requests",
    "alert": "alerts",
    "stage_error": "stage_errors",
}


class Metrics:
    """Counters and gauges of one satellite process; ``snapshot`` reads them all."""

    def __init__(
        self,
        settings: MetricsSettings,
        publish: Publish | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.publish = publish
        self.clock = clock
        self.counters: collections.Counter[str] = collections.Counter()
        #: Objects with ``xruns`` / ``dropped_chunks`` (the capture source, the sink).
        self.devices: dict[str, object] = {}
        #: Reads link counters: () -> {"outbox_depth": n, "reconnects": n, ...}.
        self.link_gauges: Callable[[], dict[str, int]] | None = None
        self.started = clock()
        self._lags_ms: collections.deque[float] = collections.deque(maxlen=LAG_WINDOW)
        self._work_ms: collections.deque[float] = collections.deque(maxlen=LAG_WINDOW)
        self._backlog_ms: collections.deque[float] = collections.deque(maxlen=LAG_WINDOW)
        self._origin: float | None = None
        self._last_publish = self.started
        self._cpu_mark = (self.started, _cpu_seconds())
        self._lock = threading.Lock()

    # --- what the loop sees ------------------------------------------------------------

    def watch(self, chunks: Iterable[AudioChunk]) -> Iterator[AudioChunk]:
        """Count frames, their lag (how late the loop gets a chunk after its audio was
        captured, from the first chunk's arrival), the loop's work on each (from handing
        it on to asking for the next) and the backlog that work would leave behind a live
        microphone (the lag of a replay run as fast as it goes), and publish when due."""
        backlog = 0.0
        for chunk in chunks:
            now = self.clock()
            if self._origin is None:
                self._origin = now - chunk.end_seconds
            lag_ms = max(0.0, (now - self._origin - chunk.end_seconds) * 1000)
            with self._lock:
                # 10 ms frames, whatever the source's chunk size
                self.counters["frames"] += max(1, round(chunk.seconds * 100))
                self._lags_ms.append(lag_ms)
            self.tick(now)
            handed = self.clock()
            yield chunk
            back = self.clock()
            work = back - handed
            # How far behind a live microphone the loop would be at the next chunk: the
            # backlog grows by the work beyond the chunk's own length (Lindley's queue).
            backlog = max(0.0, backlog + work - chunk.seconds)
            with self._lock:  # what the loop spent on this chunk (all of it, when replaying)
                self._work_ms.append(work * 1000)
                self._backlog_ms.append(backlog * 1000)

    def count_event(self, event: Event) -> None:
        name = event.type_name
        with self._lock:
            if name == "intent":
                intent = getattr(event, "intent", None)
                source = getattr(event, "source", "unknown")
                key = f"intents_{source}" if intent is not None else "not_understood"
                self.counters[key] += 1
            elif name in _COUNTED:
                self.counters[_COUNTED[name]] += 1

    # --- reading ---------------------------------------------------------------------

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        """Every counter and gauge; the loop-lag percentiles cover the interval so far."""
        now = self.clock() if now is None else now
        with self._lock:
            counters = dict(self.counters)
            lags = np.asarray(self._lags_ms, dtype=np.float64)
            work = np.asarray(self._work_ms, dtype=np.float64)
            backlog = np.asarray(self._backlog_ms, dtype=np.float64)
        for name, device in self.devices.items():
            counters[f"{name}_xruns"] = int(getattr(device, "xruns", 0))
            counters[f"{name}_dropped_chunks"] = int(getattr(device, "dropped_chunks", 0))
        gauges: dict[str, float] = {}
        if self.link_gauges is not None:
            gauges.update(self.link_gauges())
        if len(lags):
            p50, p99 = np.percentile(lags, [50, 99])
            gauges.update(
                loop_lag_p50_ms=round(float(p50), 1),
                loop_lag_p99_ms=round(float(p99), 1),
                loop_lag_max_ms=round(float(lags.max()), 1),
            )
        if len(work):
            gauges.update(
                loop_work_p99_ms=round(float(np.percentile(work, 99)), 2),
                loop_work_max_ms=round(float(work.max()), 2),
                loop_backlog_p99_ms=round(float(np.percentile(backlog, 99)), 1),
                loop_backlog_max_ms=round(float(backlog.max()), 1),
            )
        mark_time, mark_cpu = self._cpu_mark
        cpu = _cpu_seconds()
        if now > mark_time:
            gauges["cpu_percent"] = round(100 * (cpu - mark_cpu) / (now - mark_time), 1)
        gauges["rss_mb"] = round(_rss_bytes() / 2**20, 1)
        gauges["uptime_seconds"] = round(now - self.started, 1)
        return {"counters": counters, "gauges": gauges}

    def tick(self, now: float) -> bool:
        """Publish a snapshot (retained) when the interval has passed; True if it did."""
        if self.publish is None or now - self._last_publish < self.settings.interval_seconds:
            return False
        snapshot = self.snapshot(now)
        self._last_publish = now
        self._cpu_mark = (now, _cpu_seconds())
        with self._lock:
            self._lags_ms.clear()
            self._work_ms.clear()
            self._backlog_ms.clear()
        self.publish("metrics", json.dumps(snapshot, sort_keys=True), qos=0, retain=True)
        return True


class MetricsSink:
    """Passes events on, counting them."""

    def __init__(self, inner: EventSink, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics

    def publish_event(self, event: Event) -> None:
        self.metrics.count_event(event)
        self.inner.publish_event(event)


def prometheus_text(snapshot: dict[str, Any], satellite_id: str) -> str:
    """The snapshot in Prometheus' text format: counters as ``_total``, gauges as is."""
    label = f'{{satellite="{satellite_id}"}}'
    lines = []
    for name, value in sorted(snapshot["counters"].items()):
        metric = f"pocket_satellite_{name}_total"
        lines += [f"# TYPE {metric} counter", f"{metric}{label} {value}"]
    for name, value in sorted(snapshot["gauges"].items()):
        metric = f"pocket_satellite_{name}"
        lines += [f"# TYPE {metric} gauge", f"{metric}{label} {value}"]
    return "\n".join(lines) + "\n"


def serve_prometheus(
    metrics: Metrics, satellite_id: str, host: str, port: int
) -> ThreadingHTTPServer:
    """A ``/metrics`` endpoint in a daemon thread; call ``shutdown()`` to stop it."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "only /metrics is served")
                return
            body = prometheus_text(metrics.snapshot(), satellite_id).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            _LOGGER.debug("prometheus: " + format, *args)

    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as err:
        raise SatelliteError(
            f"metrics.prometheus_port: cannot listen on {host}:{port} ({err.strerror}). "
            "Fix: choose a free port, or set it to null"
        ) from None
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="prometheus", daemon=True).start()
    return server


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * _PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return 0
