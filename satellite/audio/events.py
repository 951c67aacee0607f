"""Events of playback: a reply started, finished or was stopped.

They come from the player thread; their ``timestamp_seconds`` is the player's output
position (seconds of audio handed to the output since the player was created, lead-in
silence included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..event_base import Event


@dataclass(frozen=True)
class PlaybackStarted(Event):
    """Output of a reply began: its lead-in silence starts at ``timestamp_seconds``."""

    type_name: ClassVar[str] = "playback_started"

    reply_id: str


@dataclass(frozen=True)
class PlaybackFinished(Event):
    """A reply played to its end. ``duration_seconds`` excludes the lead-in."""

    type_name: ClassVar[str] = "playback_finished"

    reply_id: str
    duration_seconds: float


@dataclass(frozen=True)
class PlaybackStopped(Event):
    """A reply was cut short. ``reason``: ``stop`` (asked to) or ``error`` (output failed)."""

    type_name: ClassVar[str] = "playback_stopped"

    reply_id: str
    played_seconds: float
    reason: str
