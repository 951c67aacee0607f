"""A recognizer that heard what a test chooses: the one part simulated where no audio
gives a result (a score, two hearings that disagree) on demand."""

from __future__ import annotations

from satellite.audio.chunk import AudioChunk
from satellite.events import UtteranceEnded
from satellite.nlu.events import IntentRecognized, Transcript
from satellite.stt.base import SttResult
from satellite.understanding import Understanding


class Heard:
    """Heard ``text`` with the per-frame ``score`` (streaming, at the pause and at the end)."""

    name = "stt"

    def __init__(self, text: str, score: float) -> None:
        self.result = SttResult(text, 0.5, (), True, score)

    def start(self, timestamp_seconds: float, context: AudioChunk | None = None) -> None:
        return None

    def process(self, frame: AudioChunk) -> None:
        return None

    def pause(self) -> SttResult | None:
        return self.result

    def resume(self) -> None:
        return None

    def finish(self) -> SttResult:
        return self.result

    def reset(self) -> None:
        return None


def decide(
    understanding: Understanding, end_seconds: float, now_seconds: float
) -> tuple[Transcript, IntentRecognized]:
    """End an utterance spoken from 0 s to ``end_seconds`` at ``now_seconds``; what the
    satellite heard (its transcript) and made of it (its intent event)."""
    ended = UtteranceEnded(
        timestamp_seconds=now_seconds,
        utterance_id="u1",
        start_seconds=0.0,
        end_seconds=end_seconds,
        audio_start_seconds=0.0,
        reason="silence",
    )
    events = understanding._understand(ended)
    (transcript,) = [e for e in events if isinstance(e, Transcript)]
    (intent,) = [e for e in events if isinstance(e, IntentRecognized)]
    return transcript, intent
