"""The systemd unit starts the whole satellite and is one systemd accepts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent.parent / "config" / "pocket-satellite.service"
INSTALLED = "/home/pi/.cache/pocket-satellite/venv/bin/pocket-satellite"


def _exec_lines(text: str) -> dict[str, str]:
    return {
        key: value
        for key, _, value in (line.partition("=") for line in text.splitlines())
        if key in ("ExecStart", "ExecStartPre")
    }


def test_the_unit_runs_the_satellite_with_its_config() -> None:
    lines = _exec_lines(UNIT.read_text())
    command = lines["ExecStart"].split()
    assert command[0] == INSTALLED
    assert command[1:] == ["run", "--config", "/etc/pocket-satellite/satellite.yaml"]
    assert lines["ExecStartPre"].split()[1:] == [
        "check-config",
        "/etc/pocket-satellite/satellite.yaml",
    ]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_verifies_the_unit(tmp_path: Path) -> None:
    """systemd-analyze checks the executables too: point them at this venv's program."""
    program = Path(sys.executable).with_name("pocket-satellite")
    assert program.exists(), program
    unit = tmp_path / "pocket-satellite.service"
    unit.write_text(
        UNIT.read_text().replace(INSTALLED, str(program)).replace("User=pi", "User=root")
    )
    result = subprocess.run(
        ["systemd-analyze", "verify", str(unit)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
    broken = tmp_path / "broken.service"
    broken.write_text(unit.read_text().replace(str(program), str(tmp_path / "missing")))
    result = subprocess.run(
        ["systemd-analyze", "verify", str(broken)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode != 0 and "missing" in result.stderr  # it does check


def test_the_unit_watches_the_frame_loop_and_always_restarts() -> None:
    """run sends READY and watchdog pings (tests/test_watchdog.py): the unit must ask
    for them, or systemd ignores them."""
    settings = dict(
        line.partition("=")[::2] for line in UNIT.read_text().splitlines() if "=" in line
    )
    assert settings["Type"] == "notify"
    assert settings["NotifyAccess"] == "main"
    assert 10 <= int(settings["WatchdogSec"]) <= 120
    assert settings["Restart"] == "always"
    assert settings["RestartPreventExitStatus"] == "2"


@pytest.mark.skipif(shutil.which("aplay") is None, reason="needs aplay (alsa-utils)")
def test_the_example_asound_conf_parses_and_names_the_satellite_devices(tmp_path: Path) -> None:
    """ALSA reads config/asound.conf and offers the two devices satellite.yaml points at;
    a syntax error in it would make ALSA refuse the whole configuration."""
    example = UNIT.with_name("asound.conf")

    def devices(conf: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["aplay", "-L"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
            env={"ALSA_CONFIG_PATH": f"/usr/share/alsa/alsa.conf:{conf}"},
        )

    listed = devices(example).stdout.split()
    assert "satellite_mic" in listed and "satellite_speaker" in listed
    broken = tmp_path / "asound.conf"
    broken.write_text(example.read_text().replace("type dsnoop", "type dsnoop {"))
    assert "satellite_mic" not in devices(broken).stdout.split()
