"""Whatever a careless user hands the commands, one clear line and a non-zero exit:
absurd WAV headers, a device or a folder as input, an output that cannot be written,
text that is not UTF-8. Never a traceback."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import REPO, run_command

DEMO_CONFIG = str(REPO / "config" / "demo.yaml")


def wav_bytes(rate: int, channels: int, width: int = 2, frames: int = 1600) -> bytes:
    """A PCM WAV whose header says ``rate``, ``channels`` and ``width`` whatever they are."""
    data = b"\0" * (frames * max(1, channels) * max(1, width))
    fmt = struct.pack(
        "<HHIIHH",
        1,
        channels & 0xFFFF,
        rate & 0xFFFFFFFF,
        (rate * channels * width) & 0xFFFFFFFF,
        (channels * width) & 0xFFFF,
        (8 * width) & 0xFFFF,
    )
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt + b"data"
    body += struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _command_args(command: str, input_path: str) -> list[str]:
    if command == "run":
        return ["run", "--config", DEMO_CONFIG, "--output", "null", "--input", input_path]
    if command == "understand":
        return ["understand", "--no-llm", "--input", input_path]
    return [command, "--input", input_path]


def _fails_clearly(args: list[str], needle: str) -> str:
    code, printed, stderr = run_command(args[0], *args[1:])
    assert code == 1, stderr
    assert printed == []
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, stderr
    assert needle in errors[0] and "Fix:" in errors[0], errors[0]
    return errors[0]


@pytest.mark.parametrize("command", ["listen", "understand", "prosody", "run"])
def test_a_sample_rate_of_zero_is_one_clear_error_in_every_command(
    command: str, tmp_path: Path
) -> None:
    wav = tmp_path / "rate0.wav"
    wav.write_bytes(wav_bytes(0, 1))
    _fails_clearly(_command_args(command, str(wav)), "sample rate of 0 Hz")


@pytest.mark.parametrize(
    ("rate", "channels", "width", "needle"),
    [
        (4_000_000_000, 1, 2, "sample rate of 4000000000 Hz"),
        (1, 1, 2, "sample rate of 1 Hz"),
        (16000, 0, 2, "channels"),
        (16000, 200, 2, "200 channels"),
        (16000, 1, 3, "24-bit"),
        (16000, 1, 0, "sample width"),
    ],
)
def test_absurd_wav_headers_are_one_clear_error(
    rate: int, channels: int, width: int, needle: str, tmp_path: Path
) -> None:
    wav = tmp_path / "odd.wav"
    wav.write_bytes(wav_bytes(rate, channels, width))
    _fails_clearly(["listen", "--input", str(wav)], needle)


@pytest.mark.parametrize("command", ["listen", "understand", "prosody", "run"])
def test_dev_null_and_a_folder_are_named_for_what_they_are(command: str, tmp_path: Path) -> None:
    _fails_clearly(_command_args(command, "/dev/null"), "/dev/null: is a character device")
    _fails_clearly(_command_args(command, str(tmp_path)), "is a directory, not a WAV file")


def test_an_empty_input_is_named() -> None:
    _fails_clearly(["understand", "--no-llm", "--input", ""], "The audio input is empty")


def test_a_pipe_as_input_is_named(tmp_path: Path) -> None:
    fifo = tmp_path / "audio.fifo"
    os.mkfifo(fifo)
    _fails_clearly(["listen", "--input", str(fifo)], "is a pipe")


@pytest.mark.parametrize(
    ("output", "needle"),
    [
        ("{tmp}", "is a directory. Fix: give a file name"),
        ("{tmp}/a-file/x.wav", "cannot make its folder"),
        ("/proc/no-such-dir/x.wav", "cannot"),
    ],
)
def test_say_to_an_output_it_cannot_write(output: str, needle: str, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("in the way", encoding="utf-8")
    _fails_clearly(["say", "Hello.", "--output", output.format(tmp=tmp_path)], needle)


def _say_bytes(text: bytes, tmp_path: Path, stdin: bytes | None = None) -> tuple[int, str]:
    output = str(tmp_path / "out.wav").encode()
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"satellite", b"say", text, b"--output", output],
        input=stdin,
        capture_output=True,
        check=False,
        cwd=REPO,
        timeout=120,
    )
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def test_say_text_that_is_not_utf8_is_one_clear_error(tmp_path: Path) -> None:
    code, stderr = _say_bytes(b"hello \xff\xfe world", tmp_path)
    assert code == 1 and "Traceback" not in stderr
    assert "error: The text is not valid UTF-8 (the byte 0xff at character 6)" in stderr
    assert not (tmp_path / "out.wav").exists()


def test_say_stdin_lines_that_are_not_utf8_are_skipped_and_fail_the_exit(tmp_path: Path) -> None:
    code, stderr = _say_bytes(b"-", tmp_path, stdin=b"Good morning.\n\xc3\x28 bad\nGood night.\n")
    assert code == 1 and "Traceback" not in stderr
    assert "error: stdin line 2 is not UTF-8 (byte 0xc3 at offset 0); skipped it" in stderr
    assert "1 line(s) of stdin were not UTF-8" in stderr
    assert (tmp_path / "out.wav").stat().st_size > 20000  # the good lines were spoken
