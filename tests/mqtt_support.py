"""Test helpers for MQTT: a real Mosquitto on a free port, a probe client, TLS files.

Used by tests/test_mqtt*.py and bench/mqtt_fanin.py. Mosquitto is Debian's
``/usr/sbin/mosquitto`` (installed by scripts/bootstrap.sh).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from satellite.events import Event
from satellite.mqtt.link import MqttLink
from satellite.mqtt.payloads import Command, Info
from satellite.mqtt.settings import MqttSettings
from satellite.mqtt.topics import ROUTES, Route

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
GOLDEN = Path(__file__).resolve().parent / "golden"


def have_mosquitto() -> bool:
    """True when Debian's mosquitto broker is installed."""
    return Path(MOSQUITTO).exists()


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def closed_port() -> int:
    """A TCP port nobody listens on, below the kernel's ephemeral range: a client retrying
    a closed port in that range can be given it as its own source port and connect to
    itself (TCP self-connect), reading its own CONNECT back ("Protocol error", seen in CI
    on port 34217), which no real broker port (1883, 8883) can do."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for port in random.Random().sample(range(max(1024, low - 12000), low), 200):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port below {low}")


@dataclass
class TlsFiles:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def make_tls_files(folder: Path) -> TlsFiles:
    """Generate a throw-away CA and certificates with the openssl command."""
    folder.mkdir(parents=True, exist_ok=True)

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=Test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    )
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "client"):
        run(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            f"/CN={name}",
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
        )
        run(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            f"{name}.pem",
        )
    return TlsFiles(
        folder / "ca.pem",
        folder / "server.pem",
        folder / "server.key",
        folder / "client.pem",
        folder / "client.key",
    )


class Mosquitto:
    """A private Mosquitto broker for one test (or one benchmark)."""

    def __init__(
        self,
        folder: Path,
        users: dict[str, str] | None = None,
        tls: TlsFiles | None = None,
        require_client_cert: bool = False,
        persistent: bool = False,
    ) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            f"listener {self.port} 127.0.0.1",
            "set_tcp_nodelay true",
            "max_queued_messages 100000",
            "max_inflight_messages 100",
            f"log_dest file {folder}/mosquitto.log",
        ]
        if persistent:
            # Sessions and their queued QoS 1 messages survive a kill -9 of the broker:
            # the database is written after every change (slow; only for outage tests).
            lines += [
                "persistence true",
                f"persistence_location {folder}/",
                "autosave_on_changes true",
                "autosave_interval 1",
            ]
        if os.geteuid() == 0:
            lines.append("user root")  # else it drops to 'mosquitto' and cannot read our files
        if users:
            pwfile = folder / "passwd"
            pwfile.write_text("")
            for user, password in users.items():
                subprocess.run(
                    ["mosquitto_passwd", "-b", str(pwfile), user, password],
                    check=True,
                    capture_output=True,
                )
            lines += ["allow_anonymous false", f"password_file {pwfile}"]
        else:
            lines.append("allow_anonymous true")
        if tls:
            lines += [
                f"cafile {tls.ca}",
                f"certfile {tls.server_cert}",
                f"keyfile {tls.server_key}",
            ]
            if require_client_cert:
                lines.append("require_certificate true")
        self.config = folder / "mosquitto.conf"
        self.config.write_text("\n".join(lines) + "\n")

    def start(self) -> None:
        """Start the broker and wait until it accepts connections."""
        self.process = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.folder / "mosquitto.log"
                raise RuntimeError(f"mosquitto exited: {log.read_text() if log.exists() else ''}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return
            time.sleep(0.02)
        raise RuntimeError("mosquitto did not start listening")

    def kill(self) -> None:
        """kill -9 the broker (an outage, not a clean shutdown)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(5)
        self.process = None

    def stop(self) -> None:
        """Terminate the broker."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None


@contextlib.contextmanager
def running_broker(folder: Path, **kwargs: Any) -> Iterator[Mosquitto]:
    """A started broker, stopped afterwards."""
    broker = Mosquitto(folder, **kwargs)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@dataclass
class Received:
    """One message a probe received, with the time it arrived (monotonic)."""

    topic: str
    payload: bytes
    retain: bool
    qos: int
    arrived: float = field(default_factory=time.perf_counter)

    def json(self) -> Any:
        """The payload parsed as JSON."""
        return json.loads(self.payload)


class Probe:
    """A paho client for tests: subscribes, records what arrives, publishes."""

    def __init__(
        self,
        port: int,
        subscriptions: tuple[str, ...] = ("#",),
        client_id: str = "",
        persistent: bool = False,
        tls: TlsFiles | None = None,
        username: str | None = None,
        password: str | None = None,
    ) -> None:
        self.messages: queue.Queue[Received] = queue.Queue()
        self.connected = threading.Event()
        self._subs = subscriptions
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"probe-{time.monotonic_ns()}",
            clean_session=not persistent,
            protocol=mqtt.MQTTv311,
        )
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.on_socket_open = _nodelay
        self.client.reconnect_delay_set(0.05, 0.2)  # type: ignore[arg-type]
        if tls is not None:
            self.client.tls_set(str(tls.ca), str(tls.client_cert), str(tls.client_key))
        if username is not None:
            self.client.username_pw_set(username, password)
        self.client.connect_async("127.0.0.1", port, 30)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise RuntimeError("probe could not connect")

    def _on_connect(self, client: mqtt.Client, u: Any, f: Any, reason: Any, p: Any) -> None:
        if not reason.is_failure:
            client.subscribe([(t, 1) for t in self._subs])

    def _on_subscribe(self, client: mqtt.Client, u: Any, mid: int, r: Any, p: Any) -> None:
        self.connected.set()

    def _on_message(self, client: mqtt.Client, u: Any, message: mqtt.MQTTMessage) -> None:
        self.messages.put(
            Received(message.topic, bytes(message.payload), bool(message.retain), message.qos)
        )

    def publish(self, topic: str, payload: bytes | str, qos: int = 1, retain: bool = False) -> None:
        """Publish and wait until the broker has it."""
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish(10)

    def wait_for(self, topic: str, timeout: float = 10.0) -> Received:
        """The next message on ``topic`` (others are kept in ``skipped``)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"nothing on {topic}")
            try:
                got = self.messages.get(timeout=remaining)
            except queue.Empty:
                raise TimeoutError(f"nothing on {topic}") from None
            if mqtt.topic_matches_sub(topic, got.topic):
                return got

    def drain(self, quiet_seconds: float = 0.3) -> list[Received]:
        """Everything that arrives until nothing has for ``quiet_seconds``."""
        out: list[Received] = []
        while True:
            try:
                out.append(self.messages.get(timeout=quiet_seconds))
            except queue.Empty:
                return out

    def close(self) -> None:
        """Disconnect and stop the network thread."""
        self.client.disconnect()
        self.client.loop_stop()


def _nodelay(client: mqtt.Client, userdata: Any, sock: Any) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def golden(name: str) -> dict[str, Any]:
    """A golden example file from tests/golden/ (shared with the HA component's tests)."""
    data: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return data


def golden_files() -> dict[str, dict[str, Any]]:
    """Every golden file by its name."""
    return {p.stem: golden(p.stem) for p in sorted(GOLDEN.glob("*.json"))}


# --- a satellite side for soak tests and the benchmark ----------------------------------


@dataclass(frozen=True)
class SoakEvent(Event):
    """A numbered QoS 1 event for outage tests (routed to ``alert`` by SOAK_ROUTES)."""

    type_name: ClassVar[str] = "test_soak"

    seq: int


SOAK_ROUTES = {**ROUTES, "test_soak": Route("alert", qos=1)}
INFO = Info("kitchen", "Kitchen", "0.1.0", "en", ("okay_nabu",), ("en-us",), ("say",))


def link_settings(port: int, outbox: Path, **overrides: Any) -> MqttSettings:
    """Settings for a test link: fast reconnects, a private outbox."""
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": port,
        "outbox_path": str(outbox),
        "reconnect_min_seconds": 0.05,
        "reconnect_max_seconds": 0.3,
        **overrides,
    }
    return MqttSettings(**values)


def make_link(
    port: int, outbox: Path, info: Info = INFO, **overrides: Any
) -> tuple[MqttLink, queue.Queue[Command]]:
    """A link with the soak route, and its inbox."""
    inbox: queue.Queue[Command] = queue.Queue(256)
    return MqttLink(link_settings(port, outbox, **overrides), info, inbox, SOAK_ROUTES), inbox


def dedup_seqs(messages: list[Received]) -> tuple[list[int], int]:
    """Soak sequence numbers in arrival order after dropping repeated ids; and the
    number of duplicates dropped."""
    seen: set[str] = set()
    seqs: list[int] = []
    for message in messages:
        data = message.json()
        if data["id"] in seen:
            continue
        seen.add(data["id"])
        seqs.append(data["seq"])
    return seqs, len(messages) - len(seqs)


def _emit(argv: list[str]) -> int:
    """A satellite process for the kill -9 test: publish SoakEvents start..count-1.

    It resumes after the last event its outbox ever stored, prints ``resume START
    PENDING`` and then each seq after handing it over, and exits when all are delivered.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--outbox", type=Path, required=True)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=0.002)
    args = parser.parse_args(argv)
    link, _ = make_link(args.port, args.outbox)
    start, pending = link.outbox.appended_total, len(link.outbox)
    print(f"resume {start} {pending}", flush=True)
    link.start()
    for seq in range(start, args.count):
        link.publish_event(SoakEvent(float(seq), seq=seq))
        print(seq, flush=True)
        time.sleep(args.interval)
    delivered = link.wait_idle(60)
    link.stop()
    print("done" if delivered else "undelivered", flush=True)
    return 0 if delivered else 1


if __name__ == "__main__":
    sys.exit(_emit(sys.argv[1:]))


def run_config(port: int, folder: Path, audio: str = 'output: "null"', extra: str = "") -> str:
    """YAML for ``pocket-satellite run`` against a test broker: fast reconnects, a private
    outbox and prosody state in ``folder``; ``audio`` holds lines of the audio section."""
    audio_lines = "".join(f"  {line}\n" for line in audio.splitlines())
    return (
        f"audio:\n{audio_lines}"
        f"prosody:\n  state_path: {folder / 'prosody.json'}\n"
        "mqtt:\n"
        "  host: 127.0.0.1\n"
        f"  port: {port}\n"
        f"  outbox_path: {folder / 'outbox.sqlite3'}\n"
        "  reconnect_min_seconds: 0.05\n"
        "  reconnect_max_seconds: 0.3\n"
        "logging:\n  level: WARNING\n" + extra
    )
