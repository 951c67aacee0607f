"""Where enrolled speakers' adaptations of the acoustic model live, and finding one.

One folder per speaker under ``stt.speakers_dir``, named by the speaker::

    <speakers_dir>/<name>/mllr_matrix       the MLLR mean transform (PocketSphinx's text form)
    <speakers_dir>/<name>/enrolment.json    what it was built from (recordings and their
                                            SHA-256, transcripts, model, tools, counts)

``pocket-satellite enrol`` writes them (``satellite.enrol``); the recognizer loads the
transform when ``stt.speaker`` names the speaker, and the shipped model unchanged when
it is null.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..errors import SatelliteError
from .settings import SPEAKER_NAME, SttSettings

MLLR_FILE = "mllr_matrix"
MANIFEST_FILE = "enrolment.json"


def speaker_dir(speakers_dir: str | Path, name: str) -> Path:
    """The folder of speaker ``name`` (not checked on disk)."""
    if not re.fullmatch(SPEAKER_NAME, name):
        raise SatelliteError(
            f"Speaker name {name[:40]!r} is not a name of letters, digits, - and _ "
            "(at most 40, starting with a letter or digit). Fix: choose such a name"
        )
    return Path(speakers_dir).expanduser() / name


def enrolled(speakers_dir: str | Path) -> list[str]:
    """The speakers with an adaptation in ``speakers_dir``, sorted."""
    root = Path(speakers_dir).expanduser()
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob(f"*/{MLLR_FILE}"))


def speaker_mllr(settings: SttSettings, model: Path | None = None) -> Path | None:
    """The MLLR transform of ``stt.speaker``, or None when no speaker is selected.

    Raises ``SatelliteError`` naming the speakers there are when it is missing, and when
    it was made for another acoustic model than ``model`` (a folder with ``means``): a
    transform moves the Gaussians of the model it was solved on, any other it spoils."""
    if settings.speaker is None:
        return None
    path = speaker_dir(settings.speakers_dir, settings.speaker) / MLLR_FILE
    if not path.is_file():
        known = enrolled(settings.speakers_dir)
        have = f"enrolled: {', '.join(known)}" if known else "no speaker is enrolled"
        raise SatelliteError(
            f"stt.speaker {settings.speaker!r} has no adaptation in "
            f"{Path(settings.speakers_dir).expanduser()} ({have}). Fix: run pocket-satellite "
            f"enrol --speaker {settings.speaker} --input DIR, or set stt.speaker: null"
        )
    if model is not None:
        _check_model(path.parent / MANIFEST_FILE, model, settings.speaker)
    return path


def _check_model(manifest: Path, model: Path, speaker: str) -> None:
    try:
        made_for = json.loads(manifest.read_text(encoding="utf-8")).get("model_means_sha256")
    except (OSError, ValueError):
        made_for = None  # made by hand: taken as it is
    if made_for is None:
        return
    if hashlib.sha256((model / "means").read_bytes()).hexdigest() != made_for:
        raise SatelliteError(
            f"The adaptation of speaker {speaker!r} was made for another acoustic model "
            f"than {model} (pocketsphinx was updated?). Fix: enrol {speaker} again from the "
            f"same recordings (listed in {manifest}), or set stt.speaker: null"
        )
