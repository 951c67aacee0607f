"""Speech out: text splitting, synthesis engines and the TTS thread.

Engines: ``espeak`` (libespeak-ng in-process, the default), ``piper`` (extra ``piper``),
``pocket`` (extra ``pocket``); build one with ``satellite.tts.engines.make_engine``.
"""

from .base import TtsEngine, TtsError, UnknownVoiceError, clean_text
from .settings import FeedbackSettings, TtsSettings
from .text import SplitterSettings, TextSplitter, split_text, split_text_async

__all__ = [
    "FeedbackSettings",
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
