"""The models manifest matches the files the installed packages ship."""

from __future__ import annotations

import dataclasses

from satellite.cli import main
from satellite.models import check, load_manifest


def test_every_default_model_is_installed_and_intact() -> None:
    entries = load_manifest()
    assert {e.id for e in entries} >= {"wake/okay_nabu", "vad/silero"}
    for entry in entries:
        status = check(entry)
        assert status.ok, (entry.id, status.problem)


def test_tampered_or_missing_models_say_how_to_fix() -> None:
    entry = load_manifest()[0]
    wrong = check(dataclasses.replace(entry, sha256="0" * 64))
    assert not wrong.ok and "checksum mismatch" in wrong.problem
    missing = check(dataclasses.replace(entry, source="pypi:no-such-package-here"))
    assert not missing.ok and "pip install no-such-package-here" in missing.problem


def test_models_command() -> None:
    assert main(["models"]) == 0
