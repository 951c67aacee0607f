"""Fuzz the command line's inputs: mutated WAV headers, text bytes for ``say``, mutated
configuration files. Each either works or fails with the package's own error (one clear
line and a non-zero exit through the CLI): never another exception, never a traceback."""

from __future__ import annotations

import io
import random
import struct
from pathlib import Path

import pytest

from satellite.audio.wav import WavFileSource
from satellite.cli import main
from satellite.config import load
from satellite.errors import SatelliteError
from tests.cli_support import REPO, run_command

SAMPLE = REPO / "satellite" / "data" / "sample.wav"
SHIPPED_CONFIG = REPO / "config" / "satellite.yaml"
HEADER_BYTES = 44
#: Header fields worth hitting with odd values: (offset, struct format).
FIELDS = [(22, "<H"), (24, "<I"), (28, "<I"), (32, "<H"), (34, "<H"), (40, "<I"), (4, "<I")]
ODD_NUMBERS = [0, 1, 3, 7, 255, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 8000, 44100, 384001]


def _short_wav() -> bytes:
    data = SAMPLE.read_bytes()
    return data[:HEADER_BYTES] + data[HEADER_BYTES : HEADER_BYTES + 16000]


def mutated_wavs(count: int, seed: int = 3) -> list[bytes]:
    """WAV files with headers broken in varied ways: odd field values, random bytes,
    truncation, junk appended."""
    rng = random.Random(seed)
    base = _short_wav()
    out: list[bytes] = []
    for _ in range(count):
        data = bytearray(base)
        how = rng.random()
        if how < 0.5:
            offset, fmt = rng.choice(FIELDS)
            limit = 0xFFFF if fmt == "<H" else 0xFFFFFFFF
            value = rng.choice([*ODD_NUMBERS, rng.randint(0, limit)]) & limit
            struct.pack_into(fmt, data, offset, value)
        elif how < 0.8:
            for _ in range(rng.randint(1, 6)):
                data[rng.randrange(HEADER_BYTES)] = rng.randrange(256)
        elif how < 0.9:
            data = data[: rng.randint(0, HEADER_BYTES + 10)]
        else:
            data += rng.randbytes(rng.randint(1, 500))
        out.append(bytes(data))
    return out


def test_mutated_wav_headers_give_audio_or_a_clear_error(tmp_path: Path) -> None:
    outcomes = {"audio": 0, "refused": 0}
    for n, data in enumerate(mutated_wavs(1500)):
        path = tmp_path / f"m{n}.wav"
        path.write_bytes(data)
        try:
            chunks = list(WavFileSource(path))
        except SatelliteError as err:
            assert "Fix:" in str(err), str(err)
            outcomes["refused"] += 1
        else:
            assert all(c.rate_hz == 16000 and c.channels == 1 for c in chunks)
            outcomes["audio"] += 1
        path.unlink()
    assert outcomes["audio"] > 100 and outcomes["refused"] > 100, outcomes


@pytest.mark.parametrize("n", range(8))
def test_listen_on_mutated_wavs_never_shows_a_traceback(n: int, tmp_path: Path) -> None:
    path = tmp_path / "m.wav"
    path.write_bytes(mutated_wavs(8, seed=11)[n])
    code, _, stderr = run_command("listen", "--input", str(path))
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert (code, len(errors)) in {(0, 0), (1, 1)}, stderr


def _argv_text(rng: random.Random) -> str:
    """What argv gives Python for random bytes: undecodable bytes become surrogates."""
    raw = rng.randbytes(rng.randint(1, 40))
    raw = raw.replace(b"\0", b"")  # argv cannot hold NUL
    return raw.decode("utf-8", "surrogateescape") or "x"


def test_say_with_random_text_bytes_works_or_fails_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    codes = []
    for n in range(25):
        output = str(tmp_path / f"s{n}.wav")
        codes.append(main(["say", _argv_text(rng), "--output", output]))
        err = capsys.readouterr().err
        if codes[-1]:
            assert err.count("error: ") == 1, err
    for n in range(10):
        data = b"\n".join(rng.randbytes(rng.randint(0, 30)) for _ in range(3))
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
        codes.append(main(["say", "-", "--output", str(tmp_path / f"i{n}.wav")]))
        err = capsys.readouterr().err
        assert "Traceback" not in err
    assert set(codes) <= {0, 1} and 1 in codes


def mutated_configs(count: int, seed: int = 9) -> list[bytes]:
    rng = random.Random(seed)
    base = SHIPPED_CONFIG.read_bytes()
    out = []
    for _ in range(count):
        data = bytearray(base)
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(data))
            how = rng.random()
            if how < 0.4:
                data[at] = rng.randrange(256)
            elif how < 0.6:
                data[at:at] = rng.choice(
                    [b": ", b"&a ", b"*a", b"- ", b"\t", b"{", b"[", b"!!python/object "]
                )
            elif how < 0.8:
                del data[at : at + rng.randint(1, 40)]
            else:
                line = data.rfind(b"\n", 0, at) + 1
                end = data.find(b"\n", at)
                data[end:end] = b"\n" + data[line:end]  # a line twice: a duplicate key
        out.append(bytes(data))
    return out


def test_mutated_config_files_load_or_give_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    refused = 0
    for data in mutated_configs(400):
        path.write_bytes(data)
        try:
            load(path)
        except SatelliteError as err:
            refused += 1
            assert "Fix:" in str(err) or "invalid YAML" in str(err), str(err)
    assert refused > 200
