"""Shared fixtures: ALSA's file/null plugins instead of a sound card, test audio."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import synth

_ALSA_DIR = Path(tempfile.mkdtemp(prefix="pocket-alsa-"))


@dataclass(frozen=True)
class AlsaFiles:
    """Where the test ALSA config reads capture input and writes playback output."""

    config: Path
    capture_in: Path
    playback_out: Path


def _write_asoundrc(root: Path) -> AlsaFiles:
    files = AlsaFiles(root / "asoundrc", root / "cap_in.raw", root / "play_out.raw")
    files.capture_in.write_bytes(b"")
    files.config.write_text(
        f'pcm.fileplay {{ type file slave.pcm {{ type null }} file "{files.playback_out}" '
        'format "raw" }\n'
        f'pcm.filecap {{ type file slave.pcm {{ type null }} file "/dev/null" '
        f'infile "{files.capture_in}" format "raw" }}\n'
        'pcm.!default { type asym playback.pcm "fileplay" capture.pcm "filecap" }\n',
        encoding="utf-8",
    )
    return files


# ALSA reads its configuration once per process, at the first PCM opened, so the test
# configuration is selected before any test runs.
ALSA = _write_asoundrc(_ALSA_DIR)
os.environ["ALSA_CONFIG_PATH"] = f"/usr/share/alsa/alsa.conf:{ALSA.config}"


@pytest.fixture
def alsa_files() -> Iterator[AlsaFiles]:
    """The test ALSA devices: ``filecap`` reads ``capture_in``, ``fileplay`` writes
    ``playback_out`` (``default`` is both). Skips when pyalsaaudio is missing."""
    pytest.importorskip("alsaaudio", reason="pyalsaaudio is not installed (extra 'alsa')")
    ALSA.playback_out.unlink(missing_ok=True)
    yield ALSA


@pytest.fixture(scope="session")
def need_espeak() -> None:
    """Skip when Debian's espeak-ng program is missing (scripts/bootstrap.sh installs it)."""
    if not synth.have_espeak():
        pytest.skip("espeak-ng is not installed: run scripts/bootstrap.sh")


@pytest.fixture(scope="session")
def need_flite() -> None:
    """Skip when Debian's flite program is missing (scripts/bootstrap.sh installs it)."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed: run scripts/bootstrap.sh")
