"""Actions of speaking that start in the frame loop.

``BargeIn`` comes from the frame loop, on the microphone's timeline, like every pipeline
event: the wake word was heard while the satellite spoke. Playback events live with the
player (``satellite.audio.events``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..events import Event


@dataclass(frozen=True)
class BargeIn(Event):
    """The wake word was heard while the satellite was speaking: stop speech, listen."""

    type_name: ClassVar[str] = "barge_in"

    wake_word: str
