"""What the app is made of and gives out: the pipeline it drives, where events go, what it
says, and the ``info`` it announces (kept apart from app.py so it stays small)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from . import __version__
from .actions import Action
from .audio.chunk import AudioChunk
from .config import Config
from .events import Event
from .mqtt.payloads import Info
from .tts.base import TtsEngine

CAPABILITIES = ("say", "tts", "response", "slots", "control")


class FrameProcessor(Protocol):
    """What the app needs of the pipeline."""

    def process(self, chunk: AudioChunk) -> list[Event]:
        """Events completed by this audio."""

    def reset(self) -> None:
        """Forget all state."""

    def poll(self, now_seconds: float, wait_seconds: float = 0.0) -> list[Event]:
        """Events that arrive between frames (LLM results, overdue HA answers)."""

    def end_of_input(self) -> list[Event]:
        """The input ran out: an utterance still being spoken ends now."""

    def set_speaking(self, speaking: bool) -> None:
        """Whether the satellite's own voice is playing (barge-in gating)."""

    def idle_frames(self) -> int:
        """Frames the loop may take at one wake-up (1 unless idle; see Pipeline)."""

    def listen_again(self, at_seconds: float) -> list[Event]:
        """Listen without a wake word (the satellite asked a question)."""

    @property
    def hearing(self) -> bool:
        """Whether someone may be speaking to the satellite (replies wait)."""

    def take_actions(self) -> list[Action]:
        """What to do since the last call: barge-in, answers owed (see AnswerDue)."""

    def set_wake_words(self, models: tuple[str, ...]) -> None:
        """Listen only for these wake word models (ValueError when not loaded)."""

    def end_follow_on(self) -> None:
        """No follow-on after the utterance just ended: go idle."""


class EventSink(Protocol):
    """Where events go (the MQTT link, or a test double)."""

    def publish_event(self, event: Event) -> None:
        """Publish one event."""


@dataclass(frozen=True)
class SpeakJob:
    """Text to say aloud; ``request_id`` set when ``say/done`` must report it."""

    text: str
    request_id: str | None = None
    #: Play the chime (the ``awake`` sound) first: an announcement from Home Assistant.
    preannounce: bool = False
    #: Audio to play instead of speaking ``text`` (``play/<id>``).
    audio: AudioChunk | None = None


def make_info(config: Config, engine: TtsEngine) -> Info:
    """The retained ``info`` payload of this satellite."""
    return Info(
        id=config.satellite.id,
        name=config.satellite.name,
        version=__version__,
        language=config.satellite.language,
        wake_words=config.frontend.wake.models,
        voices=tuple(engine.voices()),
        capabilities=CAPABILITIES,
        area=config.satellite.area,
    )
