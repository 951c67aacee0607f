"""The MQTT link against a real Mosquitto: every topic, discovery, TLS, credentials."""

from __future__ import annotations

import base64
import json
import logging
import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from satellite.events import (
    Event,
    ListeningTimeout,
    SpeechStarted,
    StageError,
    StateChanged,
    UtteranceEnded,
    WakeDetected,
)
from satellite.mqtt.link import MqttLink
from satellite.mqtt.payloads import Command, Info, PlayRequest, decode_event, decode_inbound
from satellite.mqtt.topics import ROUTES, Route
from tests.mqtt_support import (
    INFO,
    Mosquitto,
    Probe,
    golden,
    golden_files,
    have_mosquitto,
    link_settings,
    make_link,
    make_tls_files,
    running_broker,
)

pytestmark = pytest.mark.skipif(not have_mosquitto(), reason="mosquitto is not installed")
BASE = "pocket_satellite/kitchen"


@dataclass(frozen=True)
class PrivateEvent(Event):
    """Stands in for a transcript: routed with private=True."""

    type_name: ClassVar[str] = "test_private"

    text: str


@dataclass(frozen=True)
class SaidEvent(Event):
    """Stands in for an intent: its ``text`` is redacted unless transcripts are on."""

    type_name: ClassVar[str] = "test_said"

    intent: str
    text: str


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with running_broker(tmp_path / "broker") as running:
        yield running


@pytest.fixture
def probe(broker: Mosquitto) -> Iterator[Probe]:
    client = Probe(broker.port)
    yield client
    client.close()


def _start(link: MqttLink) -> MqttLink:
    link.start()
    assert link.connected.wait(10), "the link did not connect"
    return link


def test_connect_announces_status_info_and_discovery(
    broker: Mosquitto, probe: Probe, tmp_path: Path
) -> None:
    link, _ = make_link(broker.port, tmp_path / "outbox")
    _start(link)
    try:
        assert probe.wait_for(f"{BASE}/status").payload == b"online"
        info = json.loads(probe.wait_for(f"{BASE}/info").payload)
        assert Info.from_dict(info) == INFO
        configs = {}
        for _ in range(9):
            got = probe.wait_for("homeassistant/+/kitchen/+/config")
            configs[got.topic] = json.loads(got.payload)
        assert {topic.split("/")[1] for topic in configs} == {
            "sensor",
            "binary_sensor",
            "event",
            "switch",
            "number",
            "notify",
        }
        mute = configs["homeassistant/switch/kitchen/mute/config"]
        assert mute["command_topic"] == f"{BASE}/control"
        assert json.loads(mute["payload_on"]) == golden("control")["examples"][0]
        speech_rate = configs["homeassistant/sensor/kitchen/speech_rate/config"]
        assert speech_rate["state_class"] == "measurement"
        assert speech_rate["availability_topic"] == f"{BASE}/status"
        assert {c["device"]["identifiers"][0] for c in configs.values()} == {
            "pocket_satellite_kitchen"
        }
        assert "homeassistant/binary_sensor/kitchen/rushed_speech/config" in configs
        # HA restarts: discovery is sent again.
        probe.drain(0.1)
        probe.publish("homeassistant/status", "online")
        again = probe.wait_for("homeassistant/sensor/kitchen/state/config")
        assert json.loads(again.payload) == configs[again.topic]
    finally:
        link.stop()
    # A clean stop leaves 'offline' retained.
    late = Probe(broker.port, (f"{BASE}/status",))
    try:
        got = late.wait_for(f"{BASE}/status")
        assert (got.payload, got.retain) == (b"offline", True)
    finally:
        late.close()


def test_the_component_turns_discovery_off_and_its_removal_back_on(
    broker: Mosquitto, probe: Probe, tmp_path: Path
) -> None:
    link, _ = make_link(broker.port, tmp_path / "outbox")
    _start(link)
    try:
        probe.wait_for("homeassistant/switch/kitchen/mute/config")
        probe.drain(0.2)
        (configured,) = golden("component")["examples"]
        probe.publish(f"{BASE}/component", json.dumps(configured), retain=True)
        removed = {
            m.topic for m in probe.drain(0.5) if m.topic.endswith("/config") and not m.payload
        }
        assert len(removed) == 9  # every config emptied: HA drops the entities
        # HA restarts: nothing is announced while the component is configured.
        probe.publish("homeassistant/status", "online")
        assert [m for m in probe.drain(0.5) if m.topic.endswith("/config")] == []
        # The component's entry is removed: its retained message cleared, discovery back.
        probe.publish(f"{BASE}/component", b"", retain=True)
        back = {m.topic for m in probe.drain(0.5) if m.topic.endswith("/config") and m.payload}
        assert back == removed
    finally:
        link.stop()


def test_a_satellite_restarted_under_the_component_announces_nothing(
    broker: Mosquitto, probe: Probe, tmp_path: Path
) -> None:
    (configured,) = golden("component")["examples"]
    probe.publish(f"{BASE}/component", json.dumps(configured), retain=True)
    link, _ = make_link(broker.port, tmp_path / "outbox")
    _start(link)
    try:
        probe.wait_for(f"{BASE}/info")
        # Nothing announced; configs left from before the component are removed (empty).
        configs = [m for m in probe.drain(1.0) if m.topic.startswith("homeassistant/")]
        assert [m.payload for m in configs] == [b""] * len(configs)
    finally:
        link.stop()


def test_every_topic_round_trips(broker: Mosquitto, probe: Probe, tmp_path: Path) -> None:
    link, inbox = make_link(broker.port, tmp_path / "outbox")
    _start(link)
    try:
        events: list[Event] = [
            WakeDetected(2.06, "Okay Nabu", "okay_nabu", 0.93),
            StateChanged(2.06, "listening", "idle"),
            SpeechStarted(2.34, "u1"),
            UtteranceEnded(4.45, "u1", 2.34, 3.71, 1.84, "silence"),
            ListeningTimeout(7.1, "u2"),
            StageError(3.2, "vad", "RuntimeError", "boom"),
        ]
        for event in events:
            link.publish_event(event)
        ids = set()
        for event in events:
            route = ROUTES[event.type_name]
            got = probe.wait_for(f"{BASE}/{route.topic}")
            envelope, decoded = decode_event(got.payload)
            assert decoded == event
            ids.add(envelope.id)
        assert len(ids) == len(events)
        late = Probe(broker.port, (f"{BASE}/state",))  # retained: a newcomer gets it
        try:
            got = late.wait_for(f"{BASE}/state")
            assert got.retain and decode_event(got.payload)[1] == events[1]
        finally:
            late.close()

        link.publish("say/done", b'{"id":"a1","status":"done"}', 1)
        assert probe.wait_for(f"{BASE}/say/done").json() == {"id": "a1", "status": "done"}
        link.publish("tts/response/r1", b"RIFF....WAVE", 1)
        assert probe.wait_for(f"{BASE}/tts/response/r1").payload == b"RIFF....WAVE"

        expected: list[Command] = []
        for spec in golden_files().values():
            if (
                spec["direction"] != "in"
                or spec["topic"] in ("component", "alert/ack")
                or spec["format"] != "json"
            ):
                continue  # component is no command, play is binary, the link closes alerts
                # itself: each tested on its own (tests/test_open_alerts.py for alert/ack)
            for example in spec["examples"]:
                raw = json.dumps(example).encode()
                probe.publish(f"{BASE}/{spec['topic']}", raw, retain=spec["retain"])
                expected.append(decode_inbound(spec["topic"], raw))
        received = [inbox.get(timeout=10) for _ in expected]
        assert received == expected
        # A WAV to play (binary): a PlayRequest; a file that is no WAV is rejected.
        wav = base64.b64decode(golden("play")["examples"][0])
        probe.publish(f"{BASE}/play/ann_1", wav)
        play = inbox.get(timeout=10)
        assert isinstance(play, PlayRequest) and play.id == "ann_1"
        assert play.audio.samples == wav[44:]
        probe.publish(f"{BASE}/play/ann_2", b"ID3 not a wav")
        deadline = time.monotonic() + 10
        while "play" not in link.stats.rejected and time.monotonic() < deadline:
            time.sleep(0.01)
        assert link.stats.rejected["play"] == 1
        # Another satellite's topics are not ours.
        probe.publish("pocket_satellite/other/say", b'{"text": "not for us"}')
        probe.publish(f"{BASE}/say", b'{"text": "for us"}')
        assert inbox.get(timeout=10).text == "for us"  # type: ignore[union-attr]
        assert inbox.empty()
    finally:
        link.stop()


def test_transcripts_only_when_enabled(broker: Mosquitto, probe: Probe, tmp_path: Path) -> None:
    routes = {
        **ROUTES,
        "test_private": Route("transcript", private=True),
        "test_said": Route("intent", qos=1, redact=("text",)),
    }
    for enabled in (False, True):
        inbox: queue.Queue[Command] = queue.Queue()
        settings = link_settings(
            broker.port, tmp_path / f"outbox{enabled}", publish_transcripts=enabled
        )
        link = _start(MqttLink(settings, INFO, inbox, routes))
        try:
            link.publish_event(PrivateEvent(1.0, "turn on the light"))
            link.publish_event(WakeDetected(2.0, "Okay Nabu", "okay_nabu", 0.9))  # a marker
            link.publish_event(StageError(2.0, "x", "NoRoute", "unrouted types stay home"))
            got = [m.topic for m in probe.drain(0.3) if "/event/" in m.topic or "script" in m.topic]
            assert got == ([f"{BASE}/transcript"] if enabled else []) + [f"{BASE}/event/wake"]
            assert link.stats.private_skipped == (0 if enabled else 1)
            link.publish_event(SaidEvent(3.0, "HassTurnOn", "turn on the light"))
            said = json.loads(probe.wait_for(f"{BASE}/intent").payload)
            assert said["intent"] == "HassTurnOn"
            assert said["text"] == ("turn on the light" if enabled else "")
        finally:
            link.stop()


def test_unrouted_event_types_stay_on_the_device(broker: Mosquitto, tmp_path: Path) -> None:
    inbox: queue.Queue[Command] = queue.Queue()
    link = MqttLink(link_settings(broker.port, tmp_path / "ob"), INFO, inbox, routes={})
    link.publish_event(WakeDetected(2.0, "Okay Nabu", "okay_nabu", 0.9))
    assert link.stats.unrouted == 1
    link.stop()


def test_tls_with_client_certificate_and_password(tmp_path: Path) -> None:
    tls = make_tls_files(tmp_path / "tls")
    secret = tmp_path / "password"
    secret.write_text("hunter2\n")
    with running_broker(
        tmp_path / "broker", users={"sat": "hunter2"}, tls=tls, require_client_cert=True
    ) as broker:
        link, inbox = make_link(
            broker.port,
            tmp_path / "outbox",
            username="sat",
            password_file=str(secret),
            tls_ca_file=str(tls.ca),
            tls_cert_file=str(tls.client_cert),
            tls_key_file=str(tls.client_key),
        )
        _start(link)
        probe = Probe(broker.port, (f"{BASE}/#",), tls=tls, username="sat", password="hunter2")
        try:
            link.publish_event(WakeDetected(1.0, "Okay Nabu", "okay_nabu", 0.9))
            wake = decode_event(probe.wait_for(f"{BASE}/event/wake").payload)[1]
            assert isinstance(wake, WakeDetected) and wake.wake_word == "Okay Nabu"
            probe.publish(f"{BASE}/control", b'{"command": "mute"}')
            assert inbox.get(timeout=10) == decode_inbound("control", b'{"command": "mute"}')
            assert link.stats.connects == 1 and link.stats.refused == 0
        finally:
            probe.close()
            link.stop()
        # Without the CA the broker's certificate is not trusted: no connection.
        untrusted, _ = make_link(
            broker.port, tmp_path / "outbox2", username="sat", password="hunter2", tls=True
        )
        untrusted.start()
        assert not untrusted.connected.wait(1.0)
        untrusted.stop()
        assert untrusted.stats.connects == 0


def test_wrong_password_gives_one_clear_error_and_keeps_retrying(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with running_broker(tmp_path / "broker", users={"sat": "right"}) as broker:
        link, _ = make_link(broker.port, tmp_path / "outbox", username="sat", password="wrong")
        with caplog.at_level(logging.DEBUG, "satellite.mqtt"):
            link.start()
            deadline_attempts = 4
            for _ in range(200):
                if link.stats.connect_attempts >= deadline_attempts:
                    break
                link.connected.wait(0.05)
            link.stop()
        assert link.stats.connect_attempts >= deadline_attempts
        assert link.stats.refused >= deadline_attempts - 1
        assert not link.connected.is_set()
        errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(errors) == 1, [r.getMessage() for r in errors]
        message = errors[0].getMessage()
        assert "refused" in message and "mqtt.password" in message


def test_unreachable_broker_is_reported_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broker = Mosquitto(tmp_path / "never-started")  # a free port nobody listens on
    link, _ = make_link(broker.port, tmp_path / "outbox")
    with caplog.at_level(logging.WARNING, "satellite.mqtt"):
        link.start()
        for _ in range(200):
            if link.stats.connect_attempts >= 3:
                break
            link.connected.wait(0.05)
        link.stop()
    assert link.stats.connect_attempts >= 3
    assert [r.getMessage()[:30] for r in caplog.records] == ["Nothing accepts connections on"]
