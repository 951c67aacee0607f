"""Piper voices (VITS exported to ONNX) run with onnxruntime; eSpeak NG gives the phonemes.

A voice is ``NAME.onnx`` with ``NAME.onnx.json`` beside it. The model takes
``input`` (phoneme ids, int64 [1, N]), ``input_lengths`` (int64 [1]), ``scales``
(float32 [noise, length, noise_w]) and, for multi-speaker voices, ``sid``; it returns
float audio at ``audio.sample_rate``. Text is phonemised clause by clause in IPA (the
punctuation put back, as Piper's phonemiser does) and one sentence is synthesised at a
time, so the first sentence plays while the next is computed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..audio.chunk import AudioChunk, float_to_int16
from ..errors import MissingDependencyError
from .base import TtsError, UnknownVoiceError, clean_text
from .espeak import EspeakEngine

BOS, EOS, PAD = "^", "$", "_"
#: The rate at which a voice speaks at its own length scale, words per minute.
NATURAL_RATE_WPM = 160
#: Audio is handed on in pieces of this length, s (cancellation granularity).
CHUNK_SECONDS = 0.1
_CLAUSE = re.compile(r"([^.,;:!?]+)([.,;:!?]*)")


class PiperEngine:
    """One Piper voice."""

    name = "piper"

    def __init__(
        self,
        model_path: str | Path,
        rate_wpm: int = NATURAL_RATE_WPM,
        volume: int = 100,
        speaker_id: int = 0,
        npu_model: Path | None = None,
        npu_input_length: int = 256,
    ) -> None:
        try:
            import onnxruntime  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("onnxruntime", "piper", "Piper speech") from err
        self.model_path = Path(model_path)
        config_path = Path(f"{self.model_path}.json")
        if not self.model_path.is_file() or not config_path.is_file():
            raise UnknownVoiceError(
                f"Piper voice {self.model_path} not found (need {self.model_path.name} and "
                f"{config_path.name}). Fix: put both files there, or point tts.voice at "
                "an existing .onnx file"
            )
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
            self.rate_hz = int(config["audio"]["sample_rate"])
            self._id_map: dict[str, list[int]] = config["phoneme_id_map"]
            inference = config.get("inference", {})
            espeak_voice = str(config.get("espeak", {}).get("voice", "en-us"))
        except (ValueError, KeyError, TypeError) as err:
            raise TtsError(
                f"{config_path}: not a Piper voice configuration ({err!r}). Fix: "
                "use the .onnx.json that came with the voice"
            ) from None
        length_scale = float(inference.get("length_scale", 1.0)) * NATURAL_RATE_WPM / rate_wpm
        self._scales = np.array(
            [
                float(inference.get("noise_scale", 0.667)),
                length_scale,
                float(inference.get("noise_w", 0.8)),
            ],
            dtype=np.float32,
        )
        self._speaker_id = speaker_id if int(config.get("num_speakers", 1)) > 1 else None
        self._gain = volume / 100.0
        self._session: Any
        if npu_model is not None:  # the network on a Rockchip NPU (tts.npu_model)
            from .rknn import RknnSession  # noqa: PLC0415

            self._session = RknnSession(npu_model, npu_input_length)
        else:
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            self._session = onnxruntime.InferenceSession(
                str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        self._phonemizer = EspeakEngine(espeak_voice)
        self.espeak_voice = espeak_voice

    def synthesize(self, text: str, voice: str | None = None) -> Generator[AudioChunk, None, None]:
        """Speak ``text`` one sentence at a time (each in 0.1 s chunks)."""
        if (
            voice is not None
            and Path(voice).expanduser() != self.model_path
            and voice != self.model_path.stem
        ):
            raise UnknownVoiceError(
                f"This Piper engine has {self.model_path.name} loaded, not {voice!r}. Fix: "
                "set tts.voice to the model to use"
            )
        emitted = 0
        step = int(CHUNK_SECONDS * self.rate_hz)
        for ids in self.sentence_ids(text):
            samples = self._infer(ids)
            for offset in range(0, len(samples), step):
                part = samples[offset : offset + step]
                yield AudioChunk.from_int16(part, self.rate_hz, emitted / self.rate_hz)
                emitted += len(part)

    def phonemes(self, text: str) -> list[str]:
        """Each sentence of ``text`` as IPA with its punctuation, as Piper was trained."""
        sentences: list[str] = []
        current = ""
        for words, marks in _CLAUSE.findall(clean_text(text)):
            spoken = self._phonemizer.phonemes(words, self.espeak_voice) if words.strip() else ""
            current += spoken + marks[:1]
            if marks[:1] in (".", "!", "?"):
                sentences.append(current.strip())
                current = ""
            else:
                current += " "
        if current.strip():
            sentences.append(current.strip())
        return [unicodedata.normalize("NFD", s) for s in sentences if s]

    def sentence_ids(self, text: str) -> Iterator[list[int]]:
        """Phoneme ids per sentence; phonemes the voice does not know are left out."""
        for phonemes in self.phonemes(text):
            ids = list(self._id_map[BOS]) + list(self._id_map[PAD])
            for phoneme in phonemes:
                if phoneme in self._id_map:
                    ids += self._id_map[phoneme] + self._id_map[PAD]
            ids += self._id_map[EOS]
            yield ids

    def _infer(self, ids: list[int]) -> np.ndarray[Any, np.dtype[np.int16]]:
        inputs: dict[str, Any] = {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": self._scales,
        }
        if self._speaker_id is not None:
            inputs["sid"] = np.array([self._speaker_id], dtype=np.int64)
        audio = np.asarray(self._session.run(None, inputs)[0], dtype=np.float32).reshape(-1)
        return float_to_int16(np.clip(audio * self._gain, -1.0, 1.0))

    def voices(self) -> list[str]:
        """The loaded voice."""
        return [self.model_path.stem]

    def close(self) -> None:
        """Drop the session."""
        self._session = None
