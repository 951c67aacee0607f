"""Metrics: counted from the frame loop and the events, published retained on ``metrics``,
served to Prometheus; and ``run`` publishing them over a real Mosquitto."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from satellite.audio.chunk import AudioChunk
from satellite.events import StageError, UtteranceEnded, WakeDetected
from satellite.nlu.events import HelpRequested, IntentRecognized
from satellite.service.metrics import Metrics, MetricsSink, prometheus_text, serve_prometheus
from satellite.service.settings import MetricsSettings
from tests.cli_support import LiveRun
from tests.mqtt_support import (
    Probe,
    free_port,
    golden_files,
    have_mosquitto,
    run_config,
    running_broker,
)


class Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.published: list[tuple[str, str, int, bool]] = []

    def publish_event(self, event: Any) -> None:
        self.events.append(event)

    def __call__(self, path: str, payload: bytes | str, qos: int = 0, retain: bool = False) -> None:
        self.published.append((path, str(payload), qos, retain))


def _chunk(end_seconds: float) -> AudioChunk:
    return AudioChunk(16000, 2, 1, bytes(320), timestamp_seconds=end_seconds - 0.01)


def _intent(intent: str | None, source: str) -> IntentRecognized:
    return IntentRecognized(
        timestamp_seconds=1.0,
        utterance_id="u",
        intent=intent,
        slots={},
        confidence=0.9,
        source=source,
        text="x",
    )


def test_events_are_counted_by_kind_and_passed_on() -> None:
    out = Recorder()
    metrics = Metrics(MetricsSettings())
    sink = MetricsSink(out, metrics)
    events = [
        WakeDetected(
            timestamp_seconds=1.0, wake_word="Okay Nabu", model="okay_nabu", probability=0.9
        ),
        UtteranceEnded(
            timestamp_seconds=2.0,
            utterance_id="u",
            start_seconds=1.0,
            end_seconds=2.0,
            audio_start_seconds=0.5,
            reason="silence",
        ),
        _intent("HassTurnOn", "template"),
        _intent("HassTurnOn", "template"),
        _intent("CallForHelp", "llm"),
        _intent(None, "template"),
        HelpRequested(timestamp_seconds=2.0, utterance_id="u", text="", severity="high"),
        StageError(timestamp_seconds=2.0, stage="stt", error="ValueError", message="x"),
    ]
    for event in events:
        sink.publish_event(event)
    assert out.events == events
    counters = metrics.snapshot()["counters"]
    assert counters == {
        "wakes": 1,
        "utterances": 1,
        "intents_template": 2,
        "intents_llm": 1,
        "not_understood": 1,
        "help_requests": 1,
        "stage_errors": 1,
    }


def test_loop_lag_frames_and_devices_are_measured() -> None:
    now = [50.0]
    metrics = Metrics(MetricsSettings(), clock=lambda: now[0])

    class Device:
        xruns = 3
        dropped_chunks = 7

    metrics.devices["capture"] = Device()

    def chunks() -> Any:
        for i in range(1, 101):
            now[0] += 0.01 if i != 50 else 0.25  # the loop stalls 240 ms once
            yield _chunk(i * 0.01)

    assert len(list(metrics.watch(chunks()))) == 100
    snap = metrics.snapshot()
    assert snap["counters"]["frames"] == 100
    assert snap["counters"]["capture_xruns"] == 3
    assert snap["counters"]["capture_dropped_chunks"] == 7
    gauges = snap["gauges"]
    assert gauges["loop_lag_p50_ms"] == pytest.approx(240, abs=1)  # behind ever since
    assert gauges["loop_lag_max_ms"] == pytest.approx(240, abs=1)
    assert gauges["rss_mb"] > 10


def test_a_snapshot_is_published_retained_once_per_interval() -> None:
    now = [0.0]
    out = Recorder()
    metrics = Metrics(MetricsSettings(interval_seconds=60), out, clock=lambda: now[0])
    for second in range(0, 181, 10):
        now[0] = float(second)
        metrics.tick(now[0])
    assert [p[0] for p in out.published] == ["metrics"] * 3
    _, payload, qos, retain = out.published[0]
    assert retain and qos == 0
    assert set(json.loads(payload)) == {"counters", "gauges"}


def test_prometheus_text_and_endpoint() -> None:
    metrics = Metrics(MetricsSettings())
    metrics.counters["wakes"] = 4
    text = prometheus_text(metrics.snapshot(), "kitchen")
    assert "# TYPE pocket_satellite_wakes_total counter" in text
    assert 'pocket_satellite_wakes_total{satellite="kitchen"} 4' in text
    assert "# TYPE pocket_satellite_rss_mb gauge" in text
    port = free_port()
    server = serve_prometheus(metrics, "kitchen", "127.0.0.1", port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            body = reply.read().decode()
            assert reply.headers["Content-Type"].startswith("text/plain")
        assert 'pocket_satellite_wakes_total{satellite="kitchen"} 4' in body
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=5)
        assert err.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(not have_mosquitto(), reason="needs mosquitto")
def test_run_publishes_its_metrics_retained(tmp_path: Path) -> None:
    """The satellite as users run it, fed live audio: every interval (5 s) a retained
    ``metrics`` message says how many frames it heard, that MQTT is connected, and its
    RSS."""
    with running_broker(tmp_path / "broker") as broker:
        config = tmp_path / "satellite.yaml"
        config.write_text(
            run_config(broker.port, tmp_path)
            + "llm:\n  enabled: false\nmetrics:\n  interval_seconds: 5\n"
        )
        probe = Probe(broker.port, ("pocket_satellite/+/metrics",))
        snapshot: dict[str, Any] = {}
        try:
            with LiveRun(config) as satellite:
                deadline = time.monotonic() + 120.0  # a loaded machine loads models slowly
                while time.monotonic() < deadline and snapshot.get("frames", 0) <= 200:
                    satellite.feed()
                    while not probe.messages.empty():
                        received = json.loads(probe.messages.get().payload)
                        snapshot = {**received["counters"], **received["gauges"]}
                assert satellite.finish() == 0
                err = satellite.stderr()
                assert "Traceback" not in err, err
        finally:
            probe.close()
        retained = Probe(broker.port, ("pocket_satellite/+/metrics",))
        try:
            assert retained.wait_for("pocket_satellite/+/metrics").retain
        finally:
            retained.close()
    assert snapshot["frames"] > 200  # 10 ms frames over more than 2 s
    assert snapshot["mqtt_connected"] == 1
    assert snapshot["outbox_depth"] == 0
    assert 10 < snapshot["rss_mb"] < 2000


def test_the_loop_work_on_each_chunk_is_measured() -> None:
    """Replaying a file as fast as it goes, lag means nothing; the time the loop spends on
    each chunk (here 3 ms, once 80 ms) is what a live microphone would wait for."""
    now = [0.0]
    metrics = Metrics(MetricsSettings(), clock=lambda: now[0])
    for index, _ in enumerate(metrics.watch(_chunk((i + 1) * 0.01) for i in range(200))):
        now[0] += 0.08 if index == 100 else 0.003
    gauges = metrics.snapshot()["gauges"]
    assert gauges["loop_work_max_ms"] == pytest.approx(80)
    assert gauges["loop_work_p99_ms"] == pytest.approx(3, abs=0.8)
    assert gauges["loop_lag_p50_ms"] == 0  # ahead of real time: no lag
    # live, the 80 ms chunk would have left the loop 70 ms behind, caught up at 7 ms per
    # 10 ms chunk: 70, 63, ..., 7 ms, 10 chunks of the 200 behind
    assert gauges["loop_backlog_max_ms"] == pytest.approx(70)
    assert gauges["loop_backlog_p99_ms"] == pytest.approx(56, abs=1)  # the 3rd of 200


def test_the_snapshot_has_the_golden_shape() -> None:
    """tests/golden/metrics.json is what Home Assistant parses (its diagnostics)."""
    (example,) = golden_files()["metrics"]["examples"]
    metrics = Metrics(MetricsSettings())
    metrics.link_gauges = lambda: {
        "mqtt_connected": 1,
        "mqtt_reconnects": 0,
        "mqtt_rejected": 0,
        "outbox_depth": 0,
    }
    metrics.devices.update(capture=object(), playback=object())
    metrics.count_event(_intent("HassTurnOn", "template"))
    list(metrics.watch(_chunk((i + 1) * 0.01) for i in range(10)))
    snapshot = metrics.snapshot()
    assert set(snapshot["gauges"]) == set(example["gauges"])
    assert set(snapshot["counters"]) <= set(example["counters"])
    assert json.loads(json.dumps(snapshot)) == snapshot
