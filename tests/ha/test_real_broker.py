"""The headline check, with nothing mocked: a real Mosquitto, the real satellite link (in
its own venv, tests/help_peer.py) and Home Assistant's real MQTT integration.

Home Assistant is down while someone asks for help; the broker restarts (without
persistence: it forgets every retained message); HA comes back, its MQTT client with a
clean session as always, and fires the help event exactly once, with the request's id
and original time; its acknowledgement closes the alert on the satellite; the satellite's
re-sends and a reload of the integration fire nothing more.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from homeassistant.components import mqtt
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_PORT, STATE_ON
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events

from custom_components.pocket_satellite.const import EVENT_HELP

from .conftest import REPO

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
SATELLITE_PYTHON = (
    Path(os.environ.get("POCKET_VENV", Path.home() / ".cache/pocket-satellite/venv")) / "bin/python"
)
#: How long the test waits for any one step, s.
STEP_SECONDS = 20.0

pytestmark = [
    pytest.mark.skipif(not Path(MOSQUITTO).exists(), reason="mosquitto is not installed"),
    pytest.mark.skipif(
        not SATELLITE_PYTHON.exists(), reason="the satellite venv is missing (POCKET_VENV)"
    ),
    pytest.mark.parametrize("expected_lingering_timers", [True]),
]


class Broker:
    """A private Mosquitto on 127.0.0.1 without persistence."""

    def __init__(self, folder: Path) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port: int = sock.getsockname()[1]
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            f"listener {self.port} 127.0.0.1",
            "allow_anonymous true",
            "set_tcp_nodelay true",
            f"log_dest file {folder}/mosquitto.log",
        ]
        if os.geteuid() == 0:
            lines.append("user root")
        self.config = folder / "mosquitto.conf"
        self.config.write_text("\n".join(lines) + "\n")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start and wait until it listens."""
        self.process = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            except OSError:
                time.sleep(0.02)
            else:
                return
        raise RuntimeError("mosquitto did not start listening")

    def stop(self, kill: bool = False) -> None:
        """Stop it (``kill``: kill -9, an outage)."""
        if self.process is not None and self.process.poll() is None:
            if kill:
                self.process.kill()
            else:
                self.process.terminate()
            self.process.wait(5)
        self.process = None


class Peer:
    """The satellite process, driven line by line (see tests/help_peer.py)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def ask(self, command: str) -> str:
        """Send a command and return its one-line answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{command}\n".encode())
        await self.process.stdin.drain()
        async with asyncio.timeout(STEP_SECONDS):
            return (await self.process.stdout.readline()).decode().strip()

    async def wait_for(self, answer: str) -> None:
        """Ask ``state`` until it answers ``answer``."""
        async with asyncio.timeout(STEP_SECONDS):
            while (state := await self.ask("state")) != answer:
                await asyncio.sleep(0.05)
        assert state == answer


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """A started broker."""
    running = Broker(tmp_path / "broker")
    running.start()
    yield running
    running.stop()


@pytest.fixture
async def peer(broker: Broker, tmp_path: Path) -> AsyncIterator[Peer]:
    """The satellite, connected to the broker."""
    process = await asyncio.create_subprocess_exec(
        str(SATELLITE_PYTHON),
        "-m",
        "tests.help_peer",
        "--port",
        str(broker.port),
        "--folder",
        str(tmp_path / "satellite"),
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    running = Peer(process)
    await running.wait_for("open 0 connects 1")
    yield running
    assert process.stdin is not None
    process.stdin.write(b"quit\n")
    async with asyncio.timeout(STEP_SECONDS):
        await process.wait()


async def _settle(hass: HomeAssistant, seconds: float) -> None:
    """Let real time pass with the event loop running."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        await hass.async_block_till_done()


async def test_help_asked_while_ha_is_down_fires_once_when_it_returns(
    hass: HomeAssistant,
    socket_enabled: None,
    mock_hass_config: None,
    broker: Broker,
    peer: Peer,
    config_entry: MockConfigEntry,
) -> None:
    # Home Assistant is down: someone asks for help.
    before = time.time()
    assert await peer.ask("help") == "asked"
    await peer.wait_for("open 1 connects 1")
    asked_by = time.time()
    # The broker restarts and forgets the retained alert/active; the satellite
    # reconnects and publishes it again.
    broker.stop(kill=True)
    broker.start()
    await peer.wait_for("open 1 connects 2")

    # Home Assistant comes back: MQTT (a clean session), then the integration.
    helps = async_capture_events(hass, EVENT_HELP)
    mqtt_entry = MockConfigEntry(
        domain=mqtt.DOMAIN,
        data={mqtt.CONF_BROKER: "127.0.0.1", CONF_PORT: broker.port},
        version=1,
        minor_version=2,
    )
    mqtt_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mqtt_entry.entry_id)
    async with asyncio.timeout(STEP_SECONDS):
        assert await mqtt.async_wait_for_mqtt_client(hass)
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    async with asyncio.timeout(STEP_SECONDS):
        while not helps:
            await _settle(hass, 0.1)
    await peer.wait_for("open 0 connects 2")  # HA's ack closed it
    await _settle(hass, 2.5)  # past the satellite's quick re-sends
    assert len(helps) == 1
    (event,) = helps
    assert event.data["id"].startswith("h") and event.data["satellite_id"] == "kitchen"
    assert before <= event.data["time"] <= asked_by  # when it was asked, not when HA heard
    help_sensor = hass.states.get("binary_sensor.kitchen_help_requested")
    assert help_sensor is not None and help_sensor.state == STATE_ON

    # The integration reloads (as after an HA restart): nothing fires again.
    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await _settle(hass, 1.0)
    assert len(helps) == 1

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert await hass.config_entries.async_unload(mqtt_entry.entry_id)
    await hass.async_block_till_done()
    assert mqtt_entry.state is ConfigEntryState.NOT_LOADED
