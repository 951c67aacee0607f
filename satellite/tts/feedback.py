"""Feedback sounds (awake, done, error): small WAVs in the package, replaceable or off."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from ..audio.chunk import AudioChunk
from ..audio.wav import read_wav
from .settings import FeedbackSettings

SOUNDS = ("awake", "done", "error")


def bundled_sound_path(name: str) -> Path:
    """Path of a sound shipped in ``satellite/data``."""
    return Path(str(files("satellite") / "data" / f"{name}.wav"))


def load_feedback_sounds(settings: FeedbackSettings) -> dict[str, AudioChunk]:
    """The sounds to play by name; empty when feedback is off.

    A configured path that is missing or not a WAV raises AudioFormatError naming it.
    """
    if not settings.enabled:
        return {}
    sounds: dict[str, AudioChunk] = {}
    for name in SOUNDS:
        configured: str | None = getattr(settings, name)
        path = Path(configured).expanduser() if configured else bundled_sound_path(name)
        sounds[name] = read_wav(path)
    return sounds
