"""The configuration loader refuses what only a mistake or an attack produces: a key
given twice, an alias bomb, a huge file; and it never echoes a huge value back."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from satellite.cli import EXIT_CONFIG, main
from satellite.config import ConfigError, load
from satellite.config_base import MAX_SHOWN_CHARS, shorten, shown
from satellite.config_yaml import MAX_ALIASES, MAX_CONFIG_BYTES


def _problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(path)
    return caught.value.problems


def test_a_key_given_twice_is_named_by_its_path_and_lines(tmp_path: Path) -> None:
    text = "satellite:\n  id: kitchen\n  name: Kitchen\n  id: bedroom\n"
    assert _problems(tmp_path, text) == [
        "satellite.id: given twice (lines 2 and 4), and YAML would silently keep the last. "
        "Fix: keep one of them"
    ]


def test_duplicates_deep_and_at_the_top_are_found(tmp_path: Path) -> None:
    deep = "frontend:\n  vad:\n    threshold: 0.5\n    threshold: 0.6\n"
    assert _problems(tmp_path, deep)[0].startswith("frontend.vad.threshold: given twice")
    top = "mqtt:\n  enabled: false\nsatellite: {}\nmqtt: {}\n"
    assert _problems(tmp_path, top)[0].startswith("mqtt: given twice (lines 1 and 4)")


def test_a_few_aliases_and_merge_keys_still_work(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "satellite:\n  id: &id kitchen\n  name: *id\n"
        "frontend:\n  vad: &vad {threshold: 0.4}\n"
        "prosody:\n  <<: {}\n",
        encoding="utf-8",
    )
    config = load(path)
    assert config.satellite.name == "kitchen"
    assert config.frontend.vad.threshold == 0.4


def _bomb(levels: int, width: int) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("levels", "width"), [(9, 9), (30, 2), (3, 60)])
def test_an_alias_bomb_fails_fast_before_memory_grows(
    levels: int, width: int, tmp_path: Path
) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(levels, width), encoding="utf-8")
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as caught:
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 1024 * 1024, peak  # 9**9 lols expanded would be gigabytes
    [problem] = caught.value.problems
    assert problem.startswith("(aliases): ") and "Fix:" in problem


def test_too_many_aliases_are_refused(tmp_path: Path) -> None:
    text = "x: &x 1\nlist: [" + ", ".join(["*x"] * (MAX_ALIASES + 1)) + "]\n"
    [problem] = _problems(tmp_path, text)
    assert problem.startswith(f"(aliases): more than {MAX_ALIASES} YAML aliases")


def test_a_huge_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("satellite:\n  name: '" + "x" * MAX_CONFIG_BYTES + "'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="larger than 1024 KiB"):
        load(path)
    with pytest.raises(ConfigError, match="larger than 1024 KiB"):
        load("/dev/zero")  # endless: read no further than the bound


def test_a_folder_and_non_utf8_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\(file\): is a directory"):
        load(tmp_path)
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"satellite:\n  name: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"not UTF-8 text \(byte 0xe9 at offset 22\)"):
        load(path)


def test_long_values_are_cut_in_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = "y" * 500_000
    path = tmp_path / "c.yaml"
    path.write_text(
        f"frontend:\n  vad:\n    threshold: '{huge}'\n{'z' * 300}: 1\n", encoding="utf-8"
    )
    assert main(["check-config", str(path)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert len(err) < 1000, err
    assert "frontend.vad.threshold: expected a number, got 'yyy" in err
    assert "… (500002 characters). Fix: use a number from" in err
    assert "… (300 characters): unknown key" in err


def test_shown_and_shorten() -> None:
    assert shown("short") == "'short'"
    cut = shown("x" * 1000)
    assert cut.startswith("'xxx") and cut.endswith("… (1002 characters)")
    assert len(cut) < MAX_SHOWN_CHARS + 25
    message = shorten("got " + "q" * 10_000 + " which is bad. Fix: do the right thing")
    assert len(message) < 4 * MAX_SHOWN_CHARS + 10
    assert message.startswith("got qq") and message.endswith("Fix: do the right thing")
    assert "…" in message
