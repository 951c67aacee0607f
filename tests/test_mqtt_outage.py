"""Nothing is lost: broker killed mid-stream, satellite process killed mid-stream.

A persistent subscriber stands in for Home Assistant. Every QoS 1 event must arrive,
once after dropping duplicates by id, and in order.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from satellite.events import StateChanged
from tests.mqtt_support import (
    Mosquitto,
    Probe,
    Received,
    SoakEvent,
    dedup_seqs,
    have_mosquitto,
    make_link,
    running_broker,
)

pytestmark = pytest.mark.skipif(not have_mosquitto(), reason="mosquitto is not installed")
ALERT = "pocket_satellite/kitchen/alert"
COUNT = 1000
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with running_broker(tmp_path / "broker", persistent=True) as running:
        yield running


@pytest.fixture
def consumer(broker: Mosquitto) -> Iterator[Probe]:
    """A subscriber with a persistent session: the broker queues for it while it is away."""
    probe = Probe(broker.port, (ALERT,), client_id="consumer", persistent=True)
    yield probe
    probe.close()


def _collect(probe: Probe, count: int, timeout: float = 60.0) -> list[Received]:
    """Messages until ``count`` distinct ids arrived (or the timeout)."""
    got: list[Received] = []
    ids: set[str] = set()
    deadline = time.monotonic() + timeout
    while len(ids) < count and time.monotonic() < deadline:
        try:
            message = probe.wait_for(ALERT, timeout=max(0.1, deadline - time.monotonic()))
        except TimeoutError:
            break
        got.append(message)
        ids.add(message.json()["id"])
    return got


def test_broker_killed_and_restarted_mid_stream(
    broker: Mosquitto, consumer: Probe, tmp_path: Path
) -> None:
    link, _ = make_link(broker.port, tmp_path / "outbox.sqlite3")
    link.start()
    assert link.connected.wait(10)
    link.publish_event(StateChanged(0.0, "idle", "idle"))
    max_outbox = 0
    for seq in range(COUNT):
        if seq == 300:
            broker.kill()
        if seq == 700:
            max_outbox = len(link.outbox)
            broker.start()
        link.publish_event(SoakEvent(float(seq), seq=seq))
        time.sleep(0.001)
    assert link.wait_idle(60), f"{len(link.outbox)} events still in the outbox"
    seqs, duplicates = dedup_seqs(_collect(consumer, COUNT))
    link.stop()
    assert max_outbox > 0, "the outage should have filled the outbox"
    assert link.stats.connects >= 2
    assert seqs == list(range(COUNT)), f"{duplicates} duplicates dropped"


def test_outbox_bound_drops_oldest_and_counts(broker: Mosquitto, tmp_path: Path) -> None:
    link, _ = make_link(broker.port, tmp_path / "outbox.sqlite3", outbox_max_messages=50)
    broker.kill()  # never connected: everything waits in the outbox
    link.start()
    for seq in range(120):
        link.publish_event(SoakEvent(float(seq), seq=seq))
    for _ in range(200):
        if link.outbox.appended_total == 120:
            break
        time.sleep(0.01)
    assert (len(link.outbox), link.outbox.dropped_total) == (50, 70)
    broker.start()
    probe = Probe(broker.port, (ALERT,))
    try:
        assert link.wait_idle(30)
        seqs, _ = dedup_seqs(probe.drain(0.5))
    finally:
        probe.close()
        link.stop()
    assert seqs == list(range(70, 120))


def _emitter(port: int, outbox: Path, interval: float = 0.002) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.mqtt_support",
            "--port",
            str(port),
            "--outbox",
            str(outbox),
            "--count",
            str(COUNT),
            "--interval",
            str(interval),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )


def _read_until(process: subprocess.Popen[str], seq: int) -> tuple[int, int]:
    """Read the emitter's output until it handed over ``seq``; return its resume line."""
    assert process.stdout is not None
    _, start, pending = process.stdout.readline().split()
    for line in process.stdout:
        if line.strip().isdigit() and int(line) >= seq:
            break
    return int(start), int(pending)


def test_satellite_process_killed_mid_stream(
    broker: Mosquitto, consumer: Probe, tmp_path: Path
) -> None:
    outbox = tmp_path / "outbox.sqlite3"
    first = _emitter(broker.port, outbox)
    assert _read_until(first, 400) == (0, 0)
    first.kill()  # kill -9, mid-stream, broker up
    first.wait(10)
    second = _emitter(broker.port, outbox)
    start, _ = _read_until(second, COUNT - 1)
    assert 400 <= start < COUNT
    assert second.wait(60) == 0
    seqs, _ = dedup_seqs(_collect(consumer, COUNT))
    assert seqs == list(range(COUNT))


def test_satellite_killed_while_the_broker_is_down(
    broker: Mosquitto, consumer: Probe, tmp_path: Path
) -> None:
    outbox = tmp_path / "outbox.sqlite3"
    first = _emitter(broker.port, outbox)
    _read_until(first, 300)
    broker.kill()
    assert first.stdout is not None
    for line in first.stdout:  # events go on being produced into the outbox
        if line.strip().isdigit() and int(line) >= 600:
            break
    first.kill()
    first.wait(10)
    broker.start()
    second = _emitter(broker.port, outbox)
    start, pending = _read_until(second, COUNT - 1)
    assert pending > 0, "the killed process should have left undelivered events on disk"
    assert start >= 600
    assert second.wait(60) == 0
    seqs, _ = dedup_seqs(_collect(consumer, COUNT))
    assert seqs == list(range(COUNT))
