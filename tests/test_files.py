"""The shared file operations (satellite/files.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from satellite.files import replace_atomically, touch


def test_a_file_is_replaced_whole_and_no_temporary_file_stays(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")
    replace_atomically(path, "new")
    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


@pytest.mark.parametrize("fsync", [False, True])
def test_bytes_and_text_are_written_as_given(tmp_path: Path, fsync: bool) -> None:
    path = tmp_path / "prefix.state"
    replace_atomically(path, b"\x00\xffstate", fsync=fsync)
    assert path.read_bytes() == b"\x00\xffstate"
    replace_atomically(path, "caf\u00e9", fsync=fsync)
    assert path.read_bytes() == "caf\u00e9".encode()
    assert [p.name for p in tmp_path.iterdir()] == ["prefix.state"]


def test_a_failed_replace_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "taken"
    path.mkdir()  # a folder where the file should go: the replace fails
    (path / "inside").write_text("kept")
    with pytest.raises(OSError):
        replace_atomically(path, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert (path / "inside").read_text() == "kept"


def test_touch_marks_a_file_used_and_ignores_a_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "grammar.fsg"
    path.write_text("x")
    os.utime(path, (1_000_000, 1_000_000))
    touch(path)
    assert path.stat().st_mtime > 1_000_000
    touch(tmp_path / "gone")  # no error
