"""A call for help stays open until Home Assistant acknowledges it.

The schedule and the file first (no broker), then the link against a real Mosquitto: a
help request is re-sent until ``alert/ack`` names it, an ack closes it, a restart of the
satellite keeps it open, and ``alert/active`` (retained) says what is open. Last, the
delivery itself: "HA" (a plain client with a clean session, as HA's MQTT client is) is
away while help is asked for, the broker restarts (losing its retained messages), and HA,
subscribing late, still gets the request exactly once.
"""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from satellite.ids import boot_of
from satellite.mqtt.alert_payloads import AlertActive
from satellite.mqtt.link import MqttLink
from satellite.mqtt.open_alerts import (
    NOT_ACKNOWLEDGED,
    RESEND_AFTER_SECONDS,
    OpenAlerts,
    open_alerts_path,
)
from satellite.mqtt.payloads import AlertAck, Command, PayloadError, decode_inbound
from satellite.nlu.events import HelpRequested
from satellite.prosody.events import Alert
from tests.mqtt_support import (
    INFO,
    Mosquitto,
    Probe,
    Received,
    golden,
    have_mosquitto,
    link_settings,
    running_broker,
)

BASE = "pocket_satellite/kitchen"
HELP = HelpRequested(timestamp_seconds=3.0, utterance_id="u1", text="", severity="urgent")
RUSHED = Alert(
    timestamp_seconds=4.0,
    utterance_id="u2",
    kind="rushed_speech",
    severity="moderate",
    ratio=1.6,
    rate=6.8,
    baseline=4.2,
)
#: A quick schedule for tests against the broker (the real one starts at 10 s).
FAST = (0.3, 0.6, 1.0, 1.5)


def _raw(alert_id: str, t: float = 1000.0) -> bytes:
    data = {"type": "help_requested", "id": alert_id, "time": t}
    return json.dumps(data, separators=(",", ":")).encode()


# --- the schedule and the file ----------------------------------------------------------


def test_help_is_sent_again_after_10_30_60_then_every_300_seconds(tmp_path: Path) -> None:
    alerts = OpenAlerts(tmp_path / "open.json", fsync=False, boot_id="00c0ffee")
    alert_id = alerts.new_id("help_requested")
    assert alert_id == "h00c0ffee-1" and boot_of(alert_id, "h") == "00c0ffee"
    alerts.open("help_requested", "help", alert_id, 1000.0, _raw(alert_id))
    assert alerts.seconds_to_next(1000.0) == 10.0
    assert alerts.due(1009.9) == []
    sent_at = []
    now = 1000.0
    for _ in range(6):
        now += alerts.seconds_to_next(now) or 0.0
        assert alerts.due(now) == [("help", _raw(alert_id))]
        sent_at.append(now - 1000.0)
    assert sent_at == [10.0, 40.0, 100.0, 400.0, 700.0, 1000.0]
    (alert,) = alerts.active(now).alerts
    assert (alert.id, alert.kind, alert.time, alert.sent) == (alert_id, "help", 1000.0, 7)
    assert RESEND_AFTER_SECONDS == (10.0, 30.0, 60.0, 300.0)


def test_rushed_speech_stays_open_but_is_not_sent_again(tmp_path: Path) -> None:
    alerts = OpenAlerts(tmp_path / "open.json", fsync=False, boot_id="00c0ffee")
    alert_id = alerts.new_id("alert")
    assert alert_id == "a00c0ffee-1"
    alerts.open("alert", "alert", alert_id, 1000.0, _raw(alert_id))
    assert alerts.seconds_to_next(1000.0) is None and alerts.due(1e9) == []
    active = alerts.active(1001.0)
    assert [a.kind for a in active.alerts] == ["rushed_speech"] and active.notice == ""
    assert alerts.new_id("prosody") is None  # other events open nothing


def test_an_ack_closes_only_its_alert_and_unknown_acks_are_counted(tmp_path: Path) -> None:
    alerts = OpenAlerts(tmp_path / "open.json", fsync=False, boot_id="00c0ffee")
    first, second = alerts.new_id("help_requested"), alerts.new_id("help_requested")
    assert first and second and first != second
    for alert_id in (first, second):
        alerts.open("help_requested", "help", alert_id, 1000.0, _raw(alert_id))
    assert alerts.active(1000.0).notice == NOT_ACKNOWLEDGED
    assert alerts.ack(first) and not alerts.ack(first) and not alerts.ack("h00c0ffee-99")
    assert alerts.unknown_acks == 2 and alerts.changed
    assert [a.id for a in alerts.active(1000.0).alerts] == [second]
    assert alerts.ack(second)
    assert alerts.active(1000.0) == AlertActive((), "", 1000.0)


def test_open_alerts_survive_a_restart_and_new_ids_do_not_repeat(tmp_path: Path) -> None:
    path = tmp_path / "open.json"
    before = OpenAlerts(path, fsync=False, boot_id="11111111")
    old_id = before.new_id("help_requested")
    assert old_id is not None
    before.open("help_requested", "help", old_id, 1000.0, _raw(old_id))
    before.due(1010.0)
    after = OpenAlerts(path, fsync=False, boot_id="22222222")
    (alert,) = after.active(1011.0).alerts
    assert (alert.id, alert.sent, alert.payload) == (old_id, 2, json.loads(_raw(old_id)))
    assert after.seconds_to_next(1011.0) == pytest.approx(29.0)
    assert after.new_id("help_requested") == "h22222222-1" != old_id
    assert after.due(1040.0) == [("help", _raw(old_id))]


def test_an_unreadable_file_is_moved_aside_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "open.json"
    path.write_text('{"version": 1, "alerts": [{"alert": {"id": "x"}}]}')
    alerts = OpenAlerts(path, fsync=False)
    assert len(alerts) == 0 and path.with_name("open.json.bad").exists()
    assert "unreadable" in caplog.text and "Fix:" in caplog.text


def test_the_file_lives_next_to_the_outbox() -> None:
    assert open_alerts_path(Path("/s/outbox.sqlite3")) == Path("/s/outbox.open_alerts.json")


# --- payloads ---------------------------------------------------------------------------


def test_alert_active_golden_examples_round_trip() -> None:
    spec = golden("alert_active")
    assert (spec["topic"], spec["direction"], spec["retain"]) == ("alert/active", "out", True)
    for example in spec["examples"]:
        active = AlertActive.from_dict(example)
        assert active.to_dict() == example
        assert AlertActive.from_dict(json.loads(active.to_json())) == active
        for alert in active.alerts:
            assert (alert.payload["id"], alert.payload["time"]) == (alert.id, alert.time)


def test_alert_ack_golden_examples_decode() -> None:
    spec = golden("alert_ack")
    for example in spec["examples"]:
        assert decode_inbound("alert/ack", json.dumps(example).encode()) == AlertAck(example["id"])


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"nonsense",
        b"[]",
        b'{"id": 7}',
        b'{"id": "a b"}',
        b'{"id": ""}',
        b'{"id": "x", "y": 1}',
    ],
)
def test_malformed_acks_do_not_decode(raw: bytes) -> None:
    with pytest.raises(PayloadError):
        decode_inbound("alert/ack", raw)


@pytest.mark.parametrize(
    "data",
    [
        {"alerts": {}, "notice": "", "time": 1.0},
        {"alerts": [], "notice": "", "time": "now"},
        {
            "alerts": [
                {
                    "id": "h1-1",
                    "kind": "fire",
                    "source": "help",
                    "time": 1.0,
                    "sent": 1,
                    "payload": {},
                }
            ],
            "notice": "",
            "time": 1.0,
        },
    ],
)
def test_malformed_alert_active_is_rejected(data: dict[str, Any]) -> None:
    with pytest.raises(PayloadError):
        AlertActive.from_dict(data)


# --- the link and a real broker ---------------------------------------------------------

needs_broker = pytest.mark.skipif(not have_mosquitto(), reason="mosquitto is not installed")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with running_broker(tmp_path / "broker") as running:
        yield running


def _link(port: int, folder: Path, kept_by: type[OpenAlerts] = OpenAlerts) -> MqttLink:
    settings = link_settings(port, folder / "outbox.sqlite3", outbox_fsync=False)
    alerts = kept_by(open_alerts_path(settings.outbox_file), False, resend_after_seconds=FAST)
    inbox: queue.Queue[Command] = queue.Queue(16)
    link = MqttLink(settings, INFO, inbox, alerts=alerts)
    link.start()
    assert link.connected.wait(10)
    return link


def _active(probe: Probe, timeout: float = 10.0) -> dict[str, Any]:
    message: Received = probe.wait_for(f"{BASE}/alert/active", timeout)
    assert message.qos == 1
    data: dict[str, Any] = message.json()
    return data


def _active_until(probe: Probe, count: int) -> dict[str, Any]:
    while True:
        data = _active(probe)
        if len(data["alerts"]) == count:
            return data


@needs_broker
def test_unacknowledged_help_is_sent_again_until_an_ack_closes_it(
    broker: Mosquitto, tmp_path: Path
) -> None:
    probe = Probe(broker.port, (f"{BASE}/help", f"{BASE}/alert/#"))
    link = _link(broker.port, tmp_path)
    try:
        link.publish_event(HELP)
        first = probe.wait_for(f"{BASE}/help").json()
        assert first["id"].startswith("h") and boot_of(first["id"], "h")
        active = _active_until(probe, 1)
        (alert,) = active["alerts"]
        assert (alert["id"], alert["time"], alert["kind"], alert["source"]) == (
            first["id"],
            first["time"],
            "help",
            "help",
        )
        assert alert["payload"] == first and active["notice"] == NOT_ACKNOWLEDGED
        again = [probe.wait_for(f"{BASE}/help").json() for _ in range(2)]
        assert again == [first, first]  # same id, original time: HA drops duplicates by id
        probe.publish(f"{BASE}/alert/ack", json.dumps({"id": first["id"]}))
        closed = _active_until(probe, 0)
        assert closed["notice"] == ""
        assert not [m for m in probe.drain(2 * FAST[-1]) if m.topic == f"{BASE}/help"]
        assert link.alerts.resent >= 2 and len(link.alerts) == 0
    finally:
        link.stop()
        probe.close()


@needs_broker
def test_alert_active_is_retained_for_a_late_subscriber(broker: Mosquitto, tmp_path: Path) -> None:
    link = _link(broker.port, tmp_path)
    try:
        link.publish_event(RUSHED)
        link.publish_event(HELP)
        assert link.wait_idle(10)
        late = Probe(broker.port, (f"{BASE}/alert/active",))
        try:
            message = late.wait_for(f"{BASE}/alert/active")
            while len(message.json()["alerts"]) < 2:  # an older retained state may come first
                message = late.wait_for(f"{BASE}/alert/active")
            assert message.retain
            active = AlertActive.from_dict(message.json())
            assert [(a.kind, a.source, a.id[0]) for a in active.alerts] == [
                ("rushed_speech", "alert", "a"),
                ("help", "help", "h"),
            ]
            assert active.alerts[0].payload["ratio"] == 1.6
            assert active.alerts[1].payload["utterance_id"] == "u1"
            assert active.notice == NOT_ACKNOWLEDGED
        finally:
            late.close()
    finally:
        link.stop()


@needs_broker
def test_a_restarted_satellite_keeps_the_help_request_open(
    broker: Mosquitto, tmp_path: Path
) -> None:
    link = _link(broker.port, tmp_path)
    link.publish_event(HELP)
    assert link.wait_idle(10)
    (alert_id,) = [a.id for a in link.alerts.active(time.time()).alerts]
    link.stop()
    probe = Probe(broker.port, (f"{BASE}/help", f"{BASE}/alert/active"))
    again = _link(broker.port, tmp_path)
    try:
        active = _active_until(probe, 1)
        assert active["alerts"][0]["id"] == alert_id
        assert probe.wait_for(f"{BASE}/help").json()["id"] == alert_id  # and sent again
        probe.publish(f"{BASE}/alert/ack", json.dumps({"id": alert_id}))
        _active_until(probe, 0)
    finally:
        again.stop()
        probe.close()
    assert len(OpenAlerts(open_alerts_path(tmp_path / "outbox.sqlite3"), False)) == 0


def _settled(link: MqttLink, quiet: float = 1.0) -> tuple[int, int]:
    """(outbox length, re-sends) once neither changed for ``quiet`` seconds: a worker
    step that began before the link saw the broker go has finished by then."""
    seen = (len(link.outbox), link.alerts.resent)
    still_since = time.monotonic()
    deadline = still_since + 10
    while time.monotonic() - still_since < quiet and time.monotonic() < deadline:
        time.sleep(0.05)
        now = (len(link.outbox), link.alerts.resent)
        if now != seen:
            seen, still_since = now, time.monotonic()
    return seen


@needs_broker
def test_re_sends_wait_for_the_broker_instead_of_piling_up(
    broker: Mosquitto, tmp_path: Path
) -> None:
    link = _link(broker.port, tmp_path)
    try:
        link.publish_event(HELP)
        assert link.wait_idle(10)
        broker.kill()
        deadline = time.monotonic() + 10
        while link.connected.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        # (a re-send that came due before the link saw the broker go stays in the outbox;
        # the worker may be writing it while the test reads, so wait until both settle)
        queued, resent = _settled(link)
        assert queued <= 1
        time.sleep(3 * FAST[-1])  # several re-sends due while the broker is away
        link.publish_event(RUSHED)  # and the worker busy with something else
        deadline = time.monotonic() + 10
        while len(link.alerts) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        # only the new alert was added
        assert len(link.outbox) == queued + 1 and link.alerts.resent == resent
        broker.start()
        probe = Probe(broker.port, (f"{BASE}/help",))
        try:
            assert probe.wait_for(f"{BASE}/help").json()["id"].startswith("h")
        finally:
            probe.close()
        # what the probe saw may be the outbox's copy: the re-sends resume after it
        deadline = time.monotonic() + 10
        while link.alerts.resent <= resent and time.monotonic() < deadline:
            time.sleep(0.01)
        assert link.alerts.resent > resent and len(link.alerts) == 2
    finally:
        link.stop()


@needs_broker
def test_malformed_and_unknown_acks_are_counted_never_a_crash(
    broker: Mosquitto, tmp_path: Path
) -> None:
    probe = Probe(broker.port, (f"{BASE}/alert/active",))
    link = _link(broker.port, tmp_path)
    try:
        link.publish_event(HELP)
        (alert,) = _active_until(probe, 1)["alerts"]
        for raw in (b"nonsense", b'{"id": "no spaces"}', b'{"id": 1}', b"\xff"):
            probe.publish(f"{BASE}/alert/ack", raw)
        probe.publish(f"{BASE}/alert/ack", json.dumps({"id": "h00000000-1"}))
        probe.publish(f"{BASE}/alert/ack", json.dumps({"id": alert["id"]}))
        _active_until(probe, 0)
        assert link.stats.rejected == {"alert/ack": 4}
        assert link.alerts.unknown_acks == 1 and link.inbox.empty()
    finally:
        link.stop()
        probe.close()


@needs_broker
def test_ha_away_and_a_broker_restart_still_deliver_the_help_request_once(
    broker: Mosquitto, tmp_path: Path
) -> None:
    """HA's client has a clean session: what is published while it is away is not kept
    for it. It reads the retained ``alert/active`` when it comes back, fires each alert
    it has not fired (by id) and acknowledges it; the satellite closes it."""
    link = _link(broker.port, tmp_path)
    try:
        link.publish_event(HELP)  # HA is down
        assert link.wait_idle(10)
        broker.kill()  # and the broker restarts, forgetting every retained message
        broker.start()
        assert link.connected.wait(10)
        fired: list[str] = []
        ha = Probe(broker.port, (f"{BASE}/alert/active",))  # HA comes back, clean session
        try:
            deadline = time.monotonic() + 10
            while not fired or len(link.alerts):
                assert time.monotonic() < deadline, "the help request never reached HA"
                try:
                    data = ha.wait_for(f"{BASE}/alert/active", 1.0).json()
                except TimeoutError:
                    continue
                for alert in data["alerts"]:
                    if alert["id"] not in fired:
                        fired.append(alert["id"])
                    ha.publish(f"{BASE}/alert/ack", json.dumps({"id": alert["id"]}))
            assert len(fired) == 1 and fired[0].startswith("h")
        finally:
            ha.close()
    finally:
        link.stop()


_sleep = time.sleep


class _SlowOpen(OpenAlerts):
    """An alert file on a slow SD card: writing a new alert takes a while."""

    def open(self, event_type: str, source: str, alert_id: str, time: float, raw: bytes) -> None:
        _sleep(0.5)
        super().open(event_type, source, alert_id, time, raw)


@needs_broker
def test_wait_idle_waits_for_the_help_request_to_be_written(
    broker: Mosquitto, tmp_path: Path
) -> None:
    link = _link(broker.port, tmp_path, kept_by=_SlowOpen)
    try:
        link.publish_event(HELP)
        assert link.wait_idle(10)
        assert len(link.alerts) == 1  # the drain on shutdown leaves nothing half-written
    finally:
        link.stop()
