"""Settings of speech synthesis, feedback sounds and the player (sections of the config)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config_base import _boolean, _choice, _integer, _opt, _optional, _pattern, _Section, _section

TTS_ENGINES = ("espeak", "piper", "pocket")
#: The voice each engine uses when ``tts.voice`` is not set.
DEFAULT_VOICES = {"espeak": "en-us+klatt3", "pocket": "alba"}

_TEXT = _pattern(r".{1,512}", "a valid value. Fix: write 1-512 characters")


@dataclass(frozen=True)
class FeedbackSettings(_Section):
    """Short sounds that tell the person what the satellite is doing."""

    enabled: bool = _opt(True, _boolean, "Play feedback sounds at all")
    awake: str | None = _opt(
        None, _optional(_TEXT), "WAV played when the wake word is heard; null = the bundled one"
    )
    done: str | None = _opt(
        None, _optional(_TEXT), "WAV played when a request was handled; null = the bundled one"
    )
    error: str | None = _opt(
        None, _optional(_TEXT), "WAV played when a request failed; null = the bundled one"
    )


@dataclass(frozen=True)
class TtsSettings(_Section):
    """Speech synthesis: which engine and voice, how fast, how high, how loud."""

    engine: str = _opt("espeak", _choice(TTS_ENGINES), "espeak, piper or pocket")
    voice: str | None = _opt(
        None,
        _optional(_TEXT),
        "espeak: a voice name (en-us, en+f3, ...); piper: a models manifest id, a .onnx "
        "path or a model name in models_dir; pocket: a voice name or a .wav/.safetensors "
        "path; null = the engine's default (en-us+klatt3, -, alba)",
    )
    rate_wpm: int = _opt(
        160, _integer(80, 450, " words/min"), "Speaking rate, words per minute (80-450)"
    )
    pitch: int = _opt(50, _integer(0, 100), "Base pitch (0-100, 50 = normal; espeak only)")
    volume: int = _opt(100, _integer(0, 200, " %"), "Loudness, percent (0-200)")
    models_dir: str = _opt(
        "~/.local/share/pocket-satellite/models",
        _TEXT,
        "Folder where Piper model names are looked up (NAME.onnx + .onnx.json)",
    )
    feedback: FeedbackSettings = _section(FeedbackSettings)

    @property
    def resolved_voice(self) -> str | None:
        """The voice to use: the configured one or the engine's default."""
        return self.voice if self.voice is not None else DEFAULT_VOICES.get(self.engine)
