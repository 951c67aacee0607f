"""Speech out: text splitting, synthesis engines, the TTS thread and playback events.

Engines: ``espeak`` (libespeak-ng in-process, the default), ``piper`` (extra ``piper``),
``pocket`` (extra ``pocket``); build one with ``satellite.tts.engines.make_engine``.
"""

from .base import TtsEngine, TtsError, UnknownVoiceError, clean_text
from .events import BargeIn, PlaybackFinished, PlaybackStarted, PlaybackStopped
from .settings import FeedbackSettings, PlayerSettings, TtsSettings
from .text import SplitterSettings, TextSplitter, split_text, split_text_async

__all__ = [
    "BargeIn",
    "FeedbackSettings",
    "PlaybackFinished",
    "PlaybackStarted",
    "PlaybackStopped",
    "PlayerSettings",
    "SplitterSettings",
    "TextSplitter",
    "TtsEngine",
    "TtsError",
    "TtsSettings",
    "UnknownVoiceError",
    "clean_text",
    "split_text",
    "split_text_async",
]
