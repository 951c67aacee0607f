"""``pocket-satellite doctor`` against real parts: ALSA's file plugin as the microphone and
speaker, a real Mosquitto with and without the right password, a machine's /sys and
/proc written as a Pi would show them."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from satellite.config import load
from satellite.doctor import host
from satellite.doctor.checks import broker, diagnose, microphone, speaker
from satellite.doctor.report import Level, as_text, worst
from tests import synth
from tests.conftest import AlsaFiles
from tests.mqtt_support import have_mosquitto, run_config, running_broker

needs_mosquitto = pytest.mark.skipif(not have_mosquitto(), reason="needs mosquitto")


def _config(folder: Path, text: str) -> Path:
    path = folder / "satellite.yaml"
    path.write_text(text)
    return path


def _login(password: str) -> str:
    return f"mqtt:\n  username: sat\n  password: {password}\n"


def _doctor(*args: str) -> tuple[int, str]:
    """``pocket-satellite doctor`` in a child process: exit code and stdout."""
    proc = subprocess.run(
        [sys.executable, "-m", "satellite", "doctor", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout


def test_a_bad_config_is_one_problem_and_exit_2(tmp_path: Path) -> None:
    path = _config(tmp_path, "audio:\n  queue_ms: -5\n")
    code, out = _doctor("--config", str(path), "--json")
    assert code == 2
    report = json.loads(out)
    assert report["worst"] == "problem"
    (finding,) = report["checks"]
    assert finding["check"] == "config" and "queue_ms" in finding["fix"]


@pytest.mark.alsa
def test_the_microphone_level_is_measured(alsa_files: AlsaFiles, tmp_path: Path) -> None:
    tone = 8192 * np.sin(2 * np.pi * 440 * np.arange(3 * synth.RATE) / synth.RATE)
    alsa_files.capture_in.write_bytes(synth.to_chunk(tone).samples)
    config = load(_config(tmp_path, "audio:\n  input: alsa:filecap\n"))
    finding = microphone(config, 0.5)
    assert finding.level is Level.OK, finding
    peak = float(finding.detail.split("peak ")[1].split(" dBFS")[0])
    assert -13.0 < peak < -11.0  # a quarter of full scale: -12 dBFS


@pytest.mark.alsa
def test_a_silent_microphone_is_a_problem_with_the_mixer_as_fix(
    alsa_files: AlsaFiles, tmp_path: Path
) -> None:
    alsa_files.capture_in.write_bytes(bytes(2 * 3 * synth.RATE))
    config = load(_config(tmp_path, "audio:\n  input: alsa:filecap\n"))
    finding = microphone(config, 0.5)
    assert finding.level is Level.PROBLEM
    assert "silence" in finding.detail and "alsamixer" in finding.fix


@pytest.mark.alsa
def test_a_missing_device_names_the_devices_that_exist(
    alsa_files: AlsaFiles, tmp_path: Path
) -> None:
    config = load(_config(tmp_path, "audio:\n  input: alsa:nosuchcard\n  output: alsa:nosuch\n"))
    mic, out = microphone(config, 0.5), speaker(config)
    assert mic.level is Level.PROBLEM and out.level is Level.PROBLEM
    assert "nosuchcard" in mic.detail and mic.fix
    assert "nosuch" in out.detail and out.fix


@pytest.mark.alsa
def test_the_speaker_is_opened_at_the_player_rate(alsa_files: AlsaFiles, tmp_path: Path) -> None:
    config = load(_config(tmp_path, "audio:\n  output: alsa:default\nplayer:\n  rate_hz: 48000\n"))
    finding = speaker(config)
    assert finding.level is Level.OK and "48000 Hz" in finding.detail
    assert len(alsa_files.playback_out.read_bytes()) >= 2 * 4800  # 100 ms at 48 kHz


@needs_mosquitto
def test_the_broker_is_reached_and_the_password_checked(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", users={"sat": "right"}) as mosquitto:
        base = run_config(mosquitto.port, tmp_path)
        good = load(_config(tmp_path, base.replace("mqtt:\n", _login("right"))))
        assert broker(good).level is Level.OK
        bad = load(_config(tmp_path, base.replace("mqtt:\n", _login("wrong"))))
        finding = broker(bad)
        assert finding.level is Level.PROBLEM and "refused the login" in finding.detail
        assert "password" in finding.fix
        port = mosquitto.port
    refused = broker(load(_config(tmp_path, run_config(port, tmp_path))))
    assert refused.level is Level.PROBLEM and "refused" in refused.detail


def test_a_throttled_pi_is_a_problem(tmp_path: Path) -> None:
    vcgencmd = tmp_path / "vcgencmd"
    vcgencmd.write_text("#!/bin/sh\necho throttled=0x50005\n")
    vcgencmd.chmod(vcgencmd.stat().st_mode | stat.S_IEXEC)
    finding = host.throttling(str(vcgencmd))
    assert finding.level is Level.PROBLEM
    assert "under-voltage now" in finding.detail and "power supply" in finding.fix
    vcgencmd.write_text("#!/bin/sh\necho throttled=0x50000\n")
    assert host.throttling(str(vcgencmd)).level is Level.WARNING
    vcgencmd.write_text("#!/bin/sh\necho throttled=0x0\n")
    assert host.throttling(str(vcgencmd)).level is Level.OK


def test_governor_temperature_and_memory_as_a_pi_shows_them(tmp_path: Path) -> None:
    cpu = tmp_path / "devices/system/cpu/cpu0/cpufreq"
    cpu.mkdir(parents=True)
    (cpu / "scaling_governor").write_text("powersave\n")
    thermal = tmp_path / "class/thermal/thermal_zone0"
    thermal.mkdir(parents=True)
    (thermal / "temp").write_text("84500\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 1000000 kB\nMemAvailable:  204800 kB\n")
    findings = [host.governor(tmp_path), host.temperature(tmp_path), host.memory(meminfo)]
    assert [f.level for f in findings] == [Level.WARNING, Level.PROBLEM, Level.PROBLEM]
    assert "84.5 °C" in findings[1].detail and "200 MB" in findings[2].detail
    (cpu / "scaling_governor").write_text("ondemand\n")
    (thermal / "temp").write_text("51000\n")
    assert host.governor(tmp_path).level is Level.OK
    assert host.temperature(tmp_path).level is Level.OK
    assert host.governor(tmp_path / "nothing").skipped


def test_the_whole_report_says_what_to_fix(tmp_path: Path) -> None:
    """MQTT off, no devices: models, grammar and the machine are checked; the text
    report's last line sums it up and the exit code is the worst finding."""
    path = _config(
        tmp_path,
        'audio:\n  input: "-"\n  output: "null"\nmqtt:\n  enabled: false\nllm:\n  enabled: false\n',
    )
    findings = diagnose(path)
    checks = {f.check: f for f in findings}
    assert checks["speech grammar"].level is Level.OK
    assert checks["broker"].skipped and checks["microphone"].skipped
    assert any(name.startswith("model ") for name in checks)
    text = as_text(findings)
    assert text.splitlines()[-1] in (
        "all checks passed",
        "warnings only: the satellite runs, see the fixes above",
    )
    code, out = _doctor("--config", str(path))
    assert code == int(worst(findings)) and "speech grammar" in out
