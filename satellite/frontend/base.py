"""Protocols for the front-end engines. Every engine takes 10 ms pipeline frames."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..audio.chunk import AudioChunk


class FrameFilter(Protocol):
    """A stage that turns one 10 ms frame into another (noise suppression, gain)."""

    name: str

    def process(self, frame: AudioChunk) -> AudioChunk:
        """Return the processed frame (same length, same timestamp)."""

    def reset(self) -> None:
        """Forget all state."""


class VoiceActivityDetector(Protocol):
    """Speech probability per 10 ms frame."""

    name: str
    #: How late the probability follows the audio at onsets, s (subtracted from them).
    lag_seconds: float
    #: How late the probability falls when speech ends, s (subtracted from ends).
    end_lag_seconds: float
    #: Audio a freshly reset detector needs before its output means anything, s.
    warm_up_seconds: float

    def process(self, frame: AudioChunk) -> float:
        """Probability (0-1) that the most recent audio, up to this frame, is speech."""

    def reset(self) -> None:
        """Forget all state."""


@dataclass(frozen=True, slots=True)
class WakeHit:
    """A wake word detection."""

    model: str
    wake_word: str
    probability: float
    timestamp_seconds: float
    #: Below the model's cutoff, taken because a second check confirmed it.
    checked: bool = False


class WakeWordDetector(Protocol):
    """Wake word detection on 10 ms frames."""

    name: str

    def process(self, frame: AudioChunk) -> WakeHit | None:
        """Return a hit when a wake word ends in this frame."""

    def set_active(self, models: tuple[str, ...]) -> None:
        """Listen only for these of the loaded models; ValueError names one not loaded."""

    def frames_to_decision(self) -> int:
        """How many more 10 ms frames until a model listened for next decides (1: the
        next frame); a hit can only come in that frame, so the frame loop, while idle,
        may take the frames up to it at one wake-up without hearing the wake word later."""

    def reset(self) -> None:
        """Forget all state."""
