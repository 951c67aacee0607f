"""Understanding built from the configuration: the recognizer for the active intents,
the templates, the LLM fallback and the open transcriber."""

from __future__ import annotations

from ..audio.chunk import AudioChunk
from ..config import Config
from ..nlu.llm import LlmFallback
from ..nlu.recognizer import TemplateRecognizer
from ..prosody.monitor import ProsodyMonitor
from ..stt.lexicon import pocketsphinx_model_dir
from ..stt.sphinx import OpenTranscriber
from .core import Understanding


def build_understanding(config: Config, use_llm: bool = True) -> Understanding:
    """Recognizer, templates and fallback from the configuration."""
    from ..stt.factory import configured_intent_set, make_recognizer  # noqa: PLC0415

    language = config.satellite.language
    intent_set = configured_intent_set(config.nlu, language, config.satellite.area)
    recognizer = make_recognizer(config.stt, language, intent_set)
    fallback = None
    if use_llm and config.llm.enabled:
        fallback = LlmFallback(config.llm, config.satellite.language, config.nlu.intents)
    open_transcribe = None
    if config.stt.open_transcripts and config.stt.engine == "pocketsphinx":
        open_transcribe = _LazyOpenTranscriber(config.satellite.language)
    understanding = Understanding(
        recognizer,
        TemplateRecognizer(intent_set),
        fallback,
        open_transcribe,
        config.stt,
    )
    if config.prosody.enabled:
        understanding.prosody = ProsodyMonitor(config.prosody)
    return understanding


class _LazyOpenTranscriber:
    """Loads the full language model on first use (in the fallback worker)."""

    def __init__(self, language: str) -> None:
        self.language = language
        self._transcriber: OpenTranscriber | None = None

    def __call__(self, audio: AudioChunk) -> str:
        if self._transcriber is None:
            self._transcriber = OpenTranscriber(pocketsphinx_model_dir(self.language))
        return self._transcriber.transcribe(audio)
