"""Pocket TTS (Kyutai's ``pocket-tts``): its streaming generator, for users with its weights.

The package downloads its weights (and predefined voices) from Hugging Face on first
use, so an offline satellite needs them in the Hugging Face cache beforehand. Audio
arrives as float tensors at the model's rate (24 kHz) as it is decoded; closing our
iterator sets the generator's ``stop`` event.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Generator
from typing import Any

import numpy as np

from ..audio.chunk import AudioChunk, float_to_int16
from ..errors import MissingDependencyError
from .base import TtsError, UnknownVoiceError, clean_text

_LOGGER = logging.getLogger(__name__)
DEFAULT_VOICE = "alba"


class PocketEngine:
    """A Pocket TTS model and the voice states asked for so far."""

    name = "pocket"

    def __init__(
        self,
        voice: str = DEFAULT_VOICE,
        language: str | None = None,
        volume: int = 100,
        model: Any = None,
    ) -> None:
        if model is None:
            try:
                from pocket_tts import TTSModel  # noqa: PLC0415
            except ImportError as err:
                raise MissingDependencyError("pocket-tts", "pocket", "Pocket TTS speech") from err
            try:
                model = TTSModel.load_model(language=language)
            except Exception as err:  # noqa: BLE001 - network or cache: one fix
                raise TtsError(
                    f"Pocket TTS could not load its weights ({type(err).__name__}: {err}). "
                    "Fix: they are fetched from Hugging Face on first use; on an offline "
                    "satellite copy them into the Hugging Face cache (HF_HOME) first, or "
                    "use tts.engine espeak"
                ) from None
        self._model = model
        self.voice = voice
        self.rate_hz = int(model.sample_rate)
        self._gain = volume / 100.0
        self._states: dict[str, Any] = {}

    def _state(self, voice: str) -> Any:
        if voice not in self._states:
            try:
                self._states[voice] = self._model.get_state_for_audio_prompt(voice)
            except (ValueError, FileNotFoundError, OSError) as err:
                raise UnknownVoiceError(
                    f"Pocket TTS voice {voice!r} is not available ({err}). Fix: use a "
                    "predefined voice such as alba or marius, or a .wav/.safetensors "
                    "path"
                ) from None
        return self._states[voice]

    def synthesize(self, text: str, voice: str | None = None) -> Generator[AudioChunk, None, None]:
        """Stream ``text`` as the model decodes it."""
        text = clean_text(text).strip()
        state = self._state(voice or self.voice)
        if not text:
            return
        stop = threading.Event()
        emitted = 0
        try:
            for tensor in self._model.generate_audio_stream(state, text, stop=stop):
                audio = np.asarray(
                    tensor.detach().cpu().numpy() if hasattr(tensor, "detach") else tensor,
                    dtype=np.float32,
                ).reshape(-1)
                samples = float_to_int16(np.clip(audio * self._gain, -1.0, 1.0))
                yield AudioChunk.from_int16(samples, self.rate_hz, emitted / self.rate_hz)
                emitted += len(samples)
        finally:
            stop.set()

    def voices(self) -> list[str]:
        """Voices whose state is loaded (predefined names or paths load on first use)."""
        return sorted(self._states) or [self.voice]

    def close(self) -> None:
        """Forget the voice states."""
        self._states.clear()
