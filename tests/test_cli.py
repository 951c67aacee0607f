"""The ``pocket-satellite listen`` command end to end, as a user runs it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from satellite.audio.wav import read_wav
from tests.cli_support import REPO, run_command
from tests.conftest import AlsaFiles

SAMPLE = REPO / "satellite" / "data" / "sample.wav"
EXPECTED_TYPES = [
    "wake_detected",
    "state_changed",
    "speech_started",
    "utterance_ended",
    "state_changed",
]


def _listen(*args: str, stdin: bytes | None = None) -> tuple[int, list[dict[str, Any]], str]:
    return run_command("listen", *args, stdin=stdin)


def _check_sample_events(events: list[dict[str, Any]]) -> None:
    prosody = [e for e in events if e["type"] == "prosody"]
    # u<boot id>-<n>: the first utterance of this process's boot
    assert [re.sub("^u[0-9a-f]{8}-", "u", p["utterance_id"]) for p in prosody] == ["u1"]
    events = [e for e in events if e["type"] != "prosody"]
    assert [e["type"] for e in events] == EXPECTED_TYPES
    wake, _, started, ended, _ = events
    assert wake["model"] == "okay_nabu"
    # the sample: 1 s silence, "okay nabu", 0.45 s, the command from about 2.2 s
    assert 1.5 < wake["timestamp_seconds"] < 2.5
    assert started["timestamp_seconds"] == ended["start_seconds"]
    assert 2.0 < ended["start_seconds"] < 2.5
    assert ended["end_seconds"] - ended["start_seconds"] > 1.0
    assert ended["audio_start_seconds"] <= ended["start_seconds"] - 0.3
    assert "audio" not in ended


def test_listen_on_the_bundled_sample() -> None:
    code, events, stderr = _listen("--input", str(SAMPLE))
    assert code == 0, stderr
    _check_sample_events(events)


def test_listen_on_raw_stdin() -> None:
    code, events, stderr = _listen("--input", "-", stdin=read_wav(SAMPLE).samples)
    assert code == 0, stderr
    _check_sample_events(events)


def test_listen_on_an_alsa_microphone(alsa_files: AlsaFiles, tmp_path: Path) -> None:
    alsa_files.capture_in.write_bytes(read_wav(SAMPLE).samples)
    # The file plugin is not paced like a microphone: it delivers 6 s at once, so the
    # queue must hold all of it.
    config = tmp_path / "c.yaml"
    config.write_text("audio:\n  queue_ms: 60000\n", encoding="utf-8")
    code, events, stderr = _listen(
        "--input", "alsa:filecap", "--max-seconds", "6", "--config", str(config)
    )
    assert code == 0, stderr
    _check_sample_events(events)


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--input", "/no/such/file.wav"], 1, "no such WAV file"),
        (["--input", "alsa:no_such_device", "--max-seconds", "1"], 1, "Devices that exist"),
    ],
)
def test_listen_errors_are_clear(args: list[str], code: int, needle: str) -> None:
    result, events, stderr = _listen(*args)
    assert result == code
    assert needle in stderr
    assert events == []
    assert "Traceback" not in stderr


def test_listen_with_bad_config_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("frontend:\n  vad:\n    threshold: high\n", encoding="utf-8")
    code, _, stderr = _listen("--config", str(config), "--input", str(SAMPLE))
    assert code == 2
    assert "frontend.vad.threshold" in stderr
