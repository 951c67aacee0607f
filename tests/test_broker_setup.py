"""The documented broker set-up (config/mosquitto.conf + config/mosquitto.acl) keeps the
promise: killed with -9 three times mid-stream, the broker loses no intent for Home
Assistant's persistent session; and a satellite can publish only under its own topics.

The example file runs as written, with only what a test machine needs changed: the port
(a free one on 127.0.0.1), the password and ACL files (in a temporary folder), and what
Debian's main mosquitto.conf adds around the drop-in (persistence location, log file).
"""

from __future__ import annotations

import os
import queue
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from satellite.mqtt.payloads import Control, SayRequest
from tests.cli_support import REPO
from tests.mqtt_support import (
    Mosquitto,
    Probe,
    Received,
    SoakEvent,
    dedup_seqs,
    have_mosquitto,
    make_link,
)

pytestmark = pytest.mark.skipif(not have_mosquitto(), reason="mosquitto is not installed")

EXAMPLE_CONF = REPO / "config" / "mosquitto.conf"
EXAMPLE_ACL = REPO / "config" / "mosquitto.acl"
PASSWORDS = {"homeassistant": "ha-secret", "kitchen": "k-secret", "bedroom": "b-secret"}
ALERTS = "pocket_satellite/+/alert"
COUNT = 900
KILLS_AT = (150, 400, 650)


def example_broker(folder: Path, autosave: bool = True) -> Mosquitto:
    """A Mosquitto running config/mosquitto.conf in ``folder``; ``autosave=False`` puts
    Mosquitto's default autosave back (every 30 minutes) for the comparison."""
    broker = Mosquitto(folder)
    passwd, acl = folder / "passwd", folder / "acl"
    passwd.write_text("")
    for user, password in PASSWORDS.items():
        subprocess.run(
            ["mosquitto_passwd", "-b", str(passwd), user, password],
            check=True,
            capture_output=True,
        )
    acl.write_text(EXAMPLE_ACL.read_text())
    moved = {
        "listener": f"listener {broker.port} 127.0.0.1",
        "password_file": f"password_file {passwd}",
        "acl_file": f"acl_file {acl}",
    }
    if not autosave:
        moved |= {"autosave_on_changes": "autosave_on_changes false"}
        moved |= {"autosave_interval": "autosave_interval 1800"}
    # What Debian's /etc/mosquitto/mosquitto.conf sets around the drop-in.
    lines = [f"persistence_location {folder}/", f"log_dest file {folder}/mosquitto.log"]
    if os.geteuid() == 0:
        lines.append("user root")
    found = set()
    for line in EXAMPLE_CONF.read_text().splitlines():
        key = line.split(" ", 1)[0]
        found.update({key} & set(moved))
        lines.append(moved.get(key, line))
    assert found == set(moved), "config/mosquitto.conf lost a line this test relies on"
    broker.config.write_text("\n".join(lines) + "\n")
    return broker


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    running = example_broker(tmp_path / "broker")
    running.start()
    yield running
    running.stop()


def _home_assistant(port: int, subscriptions: tuple[str, ...]) -> Probe:
    """Home Assistant's MQTT client: its own user, a persistent session, and (as after a
    real outage) slower to reconnect than the satellite."""
    probe = Probe(
        port,
        subscriptions,
        client_id="home-assistant",
        persistent=True,
        username="homeassistant",
        password=PASSWORDS["homeassistant"],
    )
    probe.client.reconnect_delay_set(1, 1)
    return probe


def _collect(probe: Probe, count: int, timeout: float, quiet: float = 5.0) -> list[Received]:
    """Messages until ``count`` distinct ids arrived, nothing came for ``quiet`` seconds
    (Home Assistant is back by then: what it has not got is lost), or ``timeout``."""
    got: list[Received] = []
    ids: set[str] = set()
    deadline = time.monotonic() + timeout
    while len(ids) < count and time.monotonic() < deadline:
        try:
            message = probe.wait_for(ALERTS, timeout=min(quiet, deadline - time.monotonic()))
        except TimeoutError:
            break
        got.append(message)
        ids.add(message.json()["id"])
    return got


def stream_through_three_kills(
    broker: Mosquitto, folder: Path, collect_seconds: float
) -> list[int]:
    """The kitchen satellite sends COUNT QoS 1 events while the broker is killed with -9
    and restarted three times; the seqs Home Assistant received (duplicates dropped)."""
    home_assistant = _home_assistant(broker.port, (ALERTS,))
    link, _ = make_link(
        broker.port, folder / "outbox", username="kitchen", password=PASSWORDS["kitchen"]
    )
    link.start()
    assert link.connected.wait(10)
    try:
        for seq in range(COUNT):
            if seq in KILLS_AT:
                broker.kill()
                broker.start()
            link.publish_event(SoakEvent(float(seq), seq=seq))
            time.sleep(0.002)
        assert link.wait_idle(60), f"{len(link.outbox)} events still in the outbox"
        assert link.stats.connects >= 1 + len(KILLS_AT)
        seqs, _ = dedup_seqs(_collect(home_assistant, COUNT, collect_seconds))
    finally:
        link.stop()
        home_assistant.close()
    return seqs


def test_broker_killed_three_times_loses_no_intent(broker: Mosquitto, tmp_path: Path) -> None:
    seqs = stream_through_three_kills(broker, tmp_path, collect_seconds=60)
    assert sorted(set(seqs)) == list(range(COUNT)), f"lost {set(range(COUNT)) - set(seqs)}"


def test_with_the_default_autosave_the_same_kills_lose_intents(tmp_path: Path) -> None:
    """Why the set-up matters: Mosquitto's default autosave forgets Home Assistant's
    session at the kill, and what the satellite (re)sends before HA is back is dropped."""
    broker = example_broker(tmp_path / "broker", autosave=False)
    broker.start()
    try:
        seqs = stream_through_three_kills(broker, tmp_path, collect_seconds=5)
    finally:
        broker.stop()
    assert len(set(range(COUNT)) - set(seqs)) > 0


def test_a_satellite_publishes_and_reads_only_its_own_topics(
    broker: Mosquitto, tmp_path: Path
) -> None:
    home_assistant = _home_assistant(broker.port, ("pocket_satellite/#", "homeassistant/#"))
    kitchen, _ = make_link(
        broker.port, tmp_path / "k", username="kitchen", password=PASSWORDS["kitchen"]
    )
    bedroom_info = kitchen.info.__class__(**{**kitchen.info.to_dict(), "id": "bedroom"})
    bedroom, bedroom_inbox = make_link(
        broker.port,
        tmp_path / "b",
        info=bedroom_info,
        username="bedroom",
        password=PASSWORDS["bedroom"],
    )
    rogue = Probe(
        broker.port,
        ("pocket_satellite/bedroom/#",),
        username="kitchen",
        password=PASSWORDS["kitchen"],
    )
    try:
        for link in (kitchen, bedroom):
            link.start()
            assert link.connected.wait(10)
        # the kitchen satellite's own traffic passes the ACL: status, info, discovery
        seen = {m.topic for m in home_assistant.drain(0.5)}
        for satellite_id in ("kitchen", "bedroom"):
            assert f"pocket_satellite/{satellite_id}/status" in seen
            assert f"pocket_satellite/{satellite_id}/info" in seen
            assert any(t.startswith("homeassistant/") and f"/{satellite_id}/" in t for t in seen)
        # kitchen's credentials cannot speak for the bedroom ...
        rogue.publish("pocket_satellite/bedroom/control", b'{"command": "mute"}')
        rogue.publish("pocket_satellite/bedroom/alert", b'{"forged": true}')
        rogue.publish("homeassistant/sensor/bedroom/state/config", b"{}")
        rogue.publish("pocket_satellite/kitchen/alert", b'{"marker": true}')
        arrived = home_assistant.drain(0.5)  # everything, the marker included
        assert ("pocket_satellite/kitchen/alert", b'{"marker": true}') in [
            (m.topic, m.payload) for m in arrived
        ]
        assert [m.topic for m in arrived if "bedroom" in m.topic] == []
        # ... nor listen to it; Home Assistant can do both
        home_assistant.publish("pocket_satellite/bedroom/say", b'{"text": "Good night."}')
        assert bedroom_inbox.get(timeout=10) == SayRequest("Good night.")
        assert rogue.drain(0.5) == []
        with pytest.raises(queue.Empty):
            bedroom_inbox.get(timeout=0.3)  # the forged mute never arrived
        home_assistant.publish("pocket_satellite/bedroom/control", b'{"command": "mute"}')
        assert bedroom_inbox.get(timeout=10) == Control("mute")
    finally:
        rogue.close()
        kitchen.stop()
        bedroom.stop()
        home_assistant.close()
