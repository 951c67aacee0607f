"""Open-vocabulary engines for users who point at their own model (extras).

They have no closed grammar: every result counts as in-domain text for the templates,
and what the templates miss goes to the LLM. Each buffers the utterance and decodes it
at the endpoint.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..audio.chunk import AudioChunk
from ..errors import MissingDependencyError, SatelliteError
from .base import SpeechRecognizer, SttResult
from .settings import SttSettings


class _Buffered:
    """Collects frames; subclasses decode the whole utterance in ``_decode``."""

    name = "stt"

    def __init__(self) -> None:
        self._chunks: list[bytes] = []

    def start(self, timestamp_seconds: float, context: AudioChunk | None = None) -> None:
        self._chunks = []

    def process(self, frame: AudioChunk) -> None:
        self._chunks.append(frame.samples)

    def pause(self) -> SttResult | None:
        return None

    def resume(self) -> None:
        return None

    def finish(self) -> SttResult:
        audio = b"".join(self._chunks)
        self._chunks = []
        text = self._decode(audio).strip() if audio else ""
        return SttResult(text, 1.0 if text else 0.0, (), in_grammar=bool(text))

    def reset(self) -> None:
        self._chunks = []

    def _decode(self, audio: bytes) -> str:
        raise NotImplementedError


class FasterWhisperRecognizer(_Buffered):
    """faster-whisper with a local CTranslate2 model directory."""

    def __init__(self, model_path: str, language: str) -> None:
        super().__init__()
        try:
            from faster_whisper import WhisperModel  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("faster-whisper", "whisper", "faster-whisper") from err
        self._model: Any = WhisperModel(model_path, device="cpu", compute_type="int8")
        self._language = language.split("_", maxsplit=1)[0]

    def _decode(self, audio: bytes) -> str:
        samples = np.frombuffer(audio, dtype="<i2").astype(np.float32) / 32768.0
        segments, _ = self._model.transcribe(samples, language=self._language, beam_size=1)
        return " ".join(s.text for s in segments)


class WhisperCppRecognizer(_Buffered):
    """whisper.cpp through pywhispercpp with a local ggml model file."""

    def __init__(self, model_path: str, language: str) -> None:
        super().__init__()
        try:
            from pywhispercpp.model import Model  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("pywhispercpp", "whispercpp", "whisper.cpp") from err
        self._model: Any = Model(
            model_path, language=language.split("_", maxsplit=1)[0], print_progress=False
        )

    def _decode(self, audio: bytes) -> str:
        samples = np.frombuffer(audio, dtype="<i2").astype(np.float32) / 32768.0
        return " ".join(s.text for s in self._model.transcribe(samples))


class VoskRecognizer(_Buffered):
    """Vosk (Kaldi) with a local model directory."""

    def __init__(self, model_path: str) -> None:
        super().__init__()
        try:
            import vosk  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("vosk", "vosk", "Vosk") from err
        self._model: Any = vosk.Model(model_path)
        self._vosk = vosk

    def _decode(self, audio: bytes) -> str:
        import json  # noqa: PLC0415

        recognizer = self._vosk.KaldiRecognizer(self._model, 16000)
        recognizer.AcceptWaveform(audio)
        return str(json.loads(recognizer.FinalResult()).get("text", ""))


def make_adapter(settings: SttSettings, language: str = "en") -> SpeechRecognizer:
    """The open-vocabulary engine the settings name (it needs ``stt.model_path``)."""
    if not settings.model_path:
        raise SatelliteError(
            f"stt.engine {settings.engine} needs stt.model_path. Fix: set it "
            "to your model's file or folder"
        )
    if settings.engine == "faster_whisper":
        return FasterWhisperRecognizer(settings.model_path, language)
    if settings.engine == "whisper_cpp":
        return WhisperCppRecognizer(settings.model_path, language)
    if settings.engine == "vosk":
        return VoskRecognizer(settings.model_path)
    raise SatelliteError(f"Unknown STT engine {settings.engine!r}")
