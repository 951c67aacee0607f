"""A recognizer that heard what a test chooses: the one part simulated where no audio
gives a result (a score, two hearings that disagree) on demand."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.events import UtteranceEnded
from satellite.nlu.events import IntentRecognized, Transcript
from satellite.stt.base import SpeechRecognizer, SttResult, WordTiming
from satellite.stt.hearing import MicHistory
from satellite.understanding import Understanding, build_understanding


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


class HeardInSpeech(Heard):
    """Heard ``text`` at ``score``, its words laid 0.1 s apart from ``speech_seconds`` (so
    a pause after them may end the utterance early)."""

    def __init__(self, text: str, score: float, speech_seconds: float) -> None:
        super().__init__(text, score)
        words = tuple(
            WordTiming(w, speech_seconds + 0.1 * i, speech_seconds + 0.1 * (i + 1))
            for i, w in enumerate(text.split())
        )
        self.result = dataclasses.replace(self.result, words=words)


class SaidInTurn(Heard):
    """Heard each of ``texts`` in turn, one per utterance, at ``score`` (the last kept)."""

    def __init__(self, texts: list[str], score: float) -> None:
        super().__init__(texts[0], score)
        self.texts = texts
        self.heard = 0

    def start(self, timestamp_seconds: float, context: AudioChunk | None = None) -> None:
        text = self.texts[min(self.heard, len(self.texts) - 1)]
        self.result = dataclasses.replace(self.result, text=text)
        self.heard += 1


class TwoHearings(Heard):
    """Heard ``text`` streaming, and ``other`` when it searches again (the raw frames or
    the denoised ones: see ``stage``)."""

    def __init__(self, text: str, other: str) -> None:
        super().__init__(text, -5.0)
        self.other = other
        #: Per search again: how many frames, and whether they were the raw ones.
        self.searched: list[tuple[int, bool]] = []

    def search_whole(
        self, frames: Sequence[AudioChunk], context: AudioChunk | None = None
    ) -> SttResult:
        speech = np.frombuffer(frames[len(frames) // 2].samples, np.int16)
        self.searched.append((len(frames), bool(speech[0] > 0)))
        return SttResult(self.other, 0.5, (), bool(self.other))


def understanding_with(recognizer: SpeechRecognizer, config: Config | None = None) -> Understanding:
    """Understanding with ``config``'s templates and settings that hears through
    ``recognizer``."""
    config = config or Config()
    base = build_understanding(config, use_llm=False)
    return Understanding(recognizer, base.templates, settings=config.stt)


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
    events = understanding.understand(ended)
    (transcript,) = [e for e in events if isinstance(e, Transcript)]
    (intent,) = [e for e in events if isinstance(e, IntentRecognized)]
    return transcript, intent


def stage(
    understanding: Understanding,
    first_seconds: float = 0.0,
    loud: bool = False,
    denoised: bool = False,
    floor: int = 20,
    voices: bool = False,
) -> None:
    """Stage an utterance whose first frame was at ``first_seconds`` in a microphone
    history of 1.5 s (speech from 0.3 to 1.2 s, at 3000 over a room at ``floor``: 44 dB
    by default): raw samples positive, denoised ones negative, so a search can tell which
    it was given; heard ``denoised`` in a room judged ``loud``. ``voices``: the room's
    level wanders as other voices' does (twice ``floor`` every other 0.15 s)."""
    history = MicHistory()
    # a steady sound in every band (positive throughout: the sign tells raw from denoised)
    sound = 1.0 + 0.5 * np.sign(np.random.default_rng(0).standard_normal(160))
    for index in range(150):
        room = floor * (2 if voices and index // 15 % 2 else 1)
        samples = (sound * (3000 if 30 <= index < 120 else room)).astype(np.int16)
        history.add(
            AudioChunk.from_int16(samples, timestamp_seconds=index / 100),
            AudioChunk.from_int16(-samples, timestamp_seconds=index / 100),
        )
    understanding.hearing.take_up(history, first_seconds, loud=loud, denoised=denoised)
