"""systemd's notify protocol and watchdog: datagrams on a real Unix socket, and ``run``
under a stand-in for systemd that stops being pinged when its input stalls."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from satellite.service.sd_notify import Notifier, Watchdog
from tests.cli_support import LiveRun


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(0.0)
    yield sock
    sock.close()


def _received(sock: socket.socket) -> list[str]:
    out = []
    while True:
        try:
            out.append(sock.recv(4096).decode())
        except BlockingIOError:
            return out


def _env(sock: socket.socket, watchdog_usec: int | None = None) -> dict[str, str]:
    env = {"NOTIFY_SOCKET": sock.getsockname()}
    if watchdog_usec is not None:
        env["WATCHDOG_USEC"] = str(watchdog_usec)
    return env


def test_without_systemd_nothing_is_sent() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    assert notifier.watchdog_seconds is None
    assert not notifier.send("READY=1")


def test_ready_status_and_stopping_reach_the_socket(notify_socket: socket.socket) -> None:
    notifier = Notifier(_env(notify_socket))
    notifier.ready("idle, MQTT off")
    notifier.status("listening, MQTT off")
    notifier.stopping()
    notifier.close()
    assert _received(notify_socket) == [
        "READY=1\nSTATUS=idle, MQTT off",
        "STATUS=listening, MQTT off",
        "STOPPING=1",
    ]


def test_an_abstract_socket_is_addressed_with_a_nul() -> None:
    assert Notifier({"NOTIFY_SOCKET": "@systemd/notify"}).address == "\0systemd/notify"
    assert Notifier({"NOTIFY_SOCKET": "relative/path"}).address is None


def test_the_watchdog_is_for_this_process_only(notify_socket: socket.socket) -> None:
    env = _env(notify_socket, 3_000_000)
    assert Notifier(env).watchdog_seconds == 3.0
    assert Notifier({**env, "WATCHDOG_PID": str(os.getpid())}).watchdog_seconds == 3.0
    assert Notifier({**env, "WATCHDOG_PID": "1"}).watchdog_seconds is None
    assert Notifier({**env, "WATCHDOG_USEC": "0"}).watchdog_seconds is None


def test_a_missing_socket_is_reported_once_and_not_retried(tmp_path: Path) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")})
    assert not notifier.send("READY=1")
    assert not notifier.send("WATCHDOG=1")


def test_ticks_send_ready_then_pings_at_a_third_of_the_interval(
    notify_socket: socket.socket,
) -> None:
    now = [100.0]
    state = ["idle"]
    dog = Watchdog(Notifier(_env(notify_socket, 3_000_000)), lambda: state[0], lambda: now[0])
    for _ in range(25):  # 2.5 s of 100 ms ticks
        dog.tick()
        now[0] += 0.1
    state[0] = "listening"
    dog.tick()
    sent = _received(notify_socket)
    assert sent[0] == "READY=1\nSTATUS=idle"
    assert sent[1:3] == ["WATCHDOG=1", "WATCHDOG=1"]  # at 1.0 s and 2.0 s
    assert sent[3] == "STATUS=listening"
    assert dog.pings == 2


def test_watch_ticks_once_per_frame_and_stops_with_the_source(
    notify_socket: socket.socket,
) -> None:
    now = [0.0]
    dog = Watchdog(Notifier(_env(notify_socket, 3_000_000)), lambda: "idle", lambda: now[0])

    def frames() -> Iterator[int]:
        for i in range(10):
            now[0] += 0.5
            yield i

    assert list(dog.watch(frames())) == list(range(10))
    assert dog.pings == 4  # every 1 s of the 5 s (the first tick is READY)


def test_run_is_ready_then_pinged_while_frames_flow_and_not_when_they_stall(
    notify_socket: socket.socket, tmp_path: Path
) -> None:
    """The frame loop pings: while the microphone delivers, WATCHDOG=1 comes at a third
    of WATCHDOG_USEC; when no audio comes (a hung capture), the pings stop, so systemd
    would restart the satellite."""
    config = tmp_path / "satellite.yaml"
    config.write_text(
        'audio:\n  output: "null"\nmqtt:\n  enabled: false\nllm:\n  enabled: false\n'
        "logging:\n  level: WARNING\n"
    )
    env = {**os.environ, **_env(notify_socket, 600_000)}  # pings every 0.2 s
    with LiveRun(config, env) as satellite:
        sent: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sent.count("WATCHDOG=1") < 3:
            satellite.feed()
            sent += [m for m in _received(notify_socket) if not m.startswith("STATUS")]
        assert sent and sent[0].startswith("READY=1\nSTATUS=idle, MQTT off"), sent
        assert sent.count("WATCHDOG=1") >= 3, sent
        time.sleep(0.3)
        _received(notify_socket)  # what was in flight when the audio stopped
        time.sleep(1.0)  # 5 watchdog periods without audio
        assert "WATCHDOG=1" not in _received(notify_socket)
        assert satellite.finish() == 0  # the input ends: the satellite says it stops
        assert "STOPPING=1" in _received(notify_socket)
        err = satellite.stderr()
        assert "Traceback" not in err, err
