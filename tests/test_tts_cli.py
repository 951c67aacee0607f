"""``pocket-satellite say`` as a user runs it."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest

from satellite.cli import main


def _wav(path: Path) -> tuple[int, np.ndarray[tuple[int], np.dtype[np.int16]]]:
    with wave.open(str(path)) as handle:
        return handle.getframerate(), np.frombuffer(handle.readframes(-1), dtype="<i2")


def test_say_writes_a_wav(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "reply.wav"
    assert main(["say", "The light is on. Good night.", "--output", str(path)]) == 0
    rate, samples = _wav(path)
    assert rate == 22050
    assert 1.5 < len(samples) / rate < 5.0
    assert np.abs(samples).max() > 5000
    err = capsys.readouterr().err
    assert "speaking with espeak voice en-us+klatt3" in err
    assert "said 2 piece(s)" in err


def test_say_with_voice_and_rate(tmp_path: Path) -> None:
    slow, fast = tmp_path / "slow.wav", tmp_path / "fast.wav"
    text = "The light is on in the kitchen."
    assert main(["say", text, "--output", str(slow), "--voice", "en+f3", "--rate", "100"]) == 0
    assert main(["say", text, "--output", str(fast), "--voice", "en+f3", "--rate", "300"]) == 0
    assert len(_wav(fast)[1]) < 0.6 * len(_wav(slow)[1])


def test_say_reads_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("First line\nSecond line.\n"))
    path = tmp_path / "stdin.wav"
    assert main(["say", "-", "--output", str(path)]) == 0
    assert len(_wav(path)[1]) > 22050


def test_list_voices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["say", "--list-voices"]) == 0
    voices = capsys.readouterr().out.split()
    assert len(voices) > 50
    assert "en-us" in voices
    assert main(["say", "--voice", voices[-1], "--output", "null", "Hello."]) == 0  # usable


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["say", ""], "Nothing to say: the text is empty"),
        (["say"], "Nothing to say. Fix: pass the text"),
        (["say", "\x00\x07\x1b"], "the text held no words"),
        (["say", "Hello.", "--voice", "xx-none"], "Unknown eSpeak NG voice 'xx-none'"),
        (["say", "Hello.", "--rate", "1000"], "--rate 1000 is out of range"),
        (["say", "Hello.", "--engine", "piper"], "piper engine needs a voice"),
        (["say", "Hello.", "--engine", "piper", "--voice", "/nowhere/v.onnx"], "not found"),
    ],
)
def test_say_errors_are_clear(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*args, "--output", str(tmp_path / "x.wav")]) == 1
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "x.wav").exists()
