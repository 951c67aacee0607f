"""Configuration: validation, every problem named with its key and a fix, exit code 2."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from satellite.cli import EXIT_CONFIG, main
from satellite.config import Config, ConfigError, load, validate
from satellite.config_base import Section
from satellite.nlu.intents import Entity
from scripts.config_block import plain

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "config" / "satellite.yaml"

# (yaml text, key path that must be named in the message)
BAD_CONFIGS: list[tuple[str, str]] = [
    ("satelite:\n  id: x\n", "satelite"),
    ("satellite:\n  id: Living Room\n", "satellite.id"),
    ("satellite:\n  language: english\n", "satellite.language"),
    ("satellite:\n  nmae: x\n", "satellite.nmae"),
    ("audio:\n  queue_ms: fast\n", "audio.queue_ms"),
    ("audio:\n  queue_ms: 5\n", "audio.queue_ms"),
    ("audio:\n  input: ''\n", "audio.input"),
    ("frontend:\n  noise:\n    engine: rnnoise\n", "frontend.noise.engine"),
    ("frontend:\n  noise:\n    suppression_db: -10\n", "frontend.noise.suppression_db"),
    ("frontend:\n  noise:\n    webrtc_level: 9\n", "frontend.noise.webrtc_level"),
    ("frontend:\n  gain:\n    enabled: maybe\n", "frontend.gain.enabled"),
    ("frontend:\n  gain:\n    target_dbfs: 3\n", "frontend.gain.target_dbfs"),
    ("frontend:\n  vad:\n    engine: webrtc\n", "frontend.vad.engine"),
    ("frontend:\n  vad:\n    threshold: 1.5\n", "frontend.vad.threshold"),
    ("frontend:\n  vad: 0.5\n", "frontend.vad"),
    ("frontend:\n  wake:\n    models: [hey_siri]\n", "frontend.wake.models"),
    ("frontend:\n  wake:\n    models: []\n", "frontend.wake.models"),
    ("frontend:\n  wake:\n    models: [alexa, alexa]\n", "frontend.wake.models"),
    ("frontend:\n  wake:\n    probability_cutoff: 2\n", "frontend.wake.probability_cutoff"),
    ("frontend:\n  wake:\n    refractory_seconds: -1\n", "frontend.wake.refractory_seconds"),
    ("frontend:\n  recorder:\n    pre_roll_ms: 100\n", "frontend.recorder.pre_roll_ms"),
    (
        "frontend:\n  recorder:\n    trailing_silence_ms: 1.5\n",
        "frontend.recorder.trailing_silence_ms",
    ),
    (
        "frontend:\n  recorder:\n    max_utterance_seconds: 0\n",
        "frontend.recorder.max_utterance_seconds",
    ),
    ("nlu:\n  entities: [{name: desk lamp}]\n", "nlu.entities"),
    ("nlu:\n  entities: desk lamp\n", "nlu.entities"),
    ("logging:\n  level: LOUD\n", "logging.level"),
    ("- just\n- a list\n", "(top level)"),
    ("satellite: [unclosed\n", "(syntax)"),
]


@pytest.mark.parametrize(("text", "key"), BAD_CONFIGS)
def test_bad_config_exit_2_names_key(
    text: str, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["check-config", str(path)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    line = next((ln for ln in err.splitlines() if ln.strip().startswith(f"- {key}")), None)
    assert line is not None, err
    assert "Fix:" in line, line


def test_all_problems_are_reported_at_once() -> None:
    with pytest.raises(ConfigError) as info:
        validate({"audio": {"queue_ms": "x"}, "frontend": {"vad": {"threshold": 7}}, "bogus": 1})
    keys = sorted(p.split(":")[0] for p in info.value.problems)
    assert keys == ["audio.queue_ms", "bogus", "frontend.vad.threshold"]


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(tmp_path / "nope.yaml")]) == EXIT_CONFIG
    assert "not found" in capsys.readouterr().err


def test_exit_code_of_the_real_command(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("frontend:\n  noise:\n    engine: rnnoise\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "satellite", "check-config", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "frontend.noise.engine" in proc.stderr
    assert "speex, webrtc, off" in proc.stderr


def test_empty_file_gives_defaults(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert load(path) == Config()


def test_values_are_typed() -> None:
    config = validate(
        {
            "frontend": {
                "wake": {"models": ["alexa", "okay_nabu"], "probability_cutoff": 0.7},
                "recorder": {"trailing_silence_ms": 400},
            }
        }
    )
    assert config.frontend.wake.models == ("alexa", "okay_nabu")
    assert config.frontend.wake.probability_cutoff == 0.7
    assert config.frontend.recorder.trailing_silence_ms == 400
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.frontend.recorder.pre_roll_ms = 1  # type: ignore[misc]


def test_entities_are_read_as_entities() -> None:
    entities = [
        {"name": "desk lamp", "domain": "light"},
        {"name": "tv", "domain": "media_player", "area": "den"},
    ]
    config = validate({"nlu": {"entities": entities}})
    assert config.nlu.entities == (
        Entity("desk lamp", "light"),
        Entity("tv", "media_player", "den"),
    )
    assert validate({}).nlu.entities == Config().nlu.entities


def _defaults(section: Section) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(section):  # type: ignore[arg-type]
        value = getattr(section, f.name)
        if isinstance(value, Section):
            out[f.name] = _defaults(value)
        else:
            out[f.name] = plain(value)
    return out


def test_shipped_config_documents_every_option_with_its_default() -> None:
    shipped = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    assert shipped == _defaults(Config())
    assert load(SHIPPED) == Config()
    text = SHIPPED.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(text):
        stripped = line.strip()
        is_option = re.match(r"[a-z_]+:\s*\S", stripped) is not None
        if is_option:
            assert text[index - 1].strip().startswith("#"), f"undocumented option: {line}"
