"""Settings of speech synthesis, feedback sounds and the player (sections of the config)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config_base import (
    Section,
    check_boolean,
    check_choice,
    check_integer,
    check_optional,
    check_pattern,
    option,
    subsection,
)

TTS_ENGINES = ("espeak", "piper", "pocket")
#: The voice each engine uses when ``tts.voice`` is not set.
DEFAULT_VOICES = {"espeak": "en-us+klatt3", "pocket": "alba"}

_TEXT = check_pattern(r".{1,512}", "a valid value. Fix: write 1-512 characters")


@dataclass(frozen=True)
class FeedbackSettings(Section):
    """Short sounds that tell the person what the satellite is doing."""

    enabled: bool = option(True, check_boolean, "Play feedback sounds at all")
    awake: str | None = option(
        None,
        check_optional(_TEXT),
        "WAV played before an announcement that asks for a chime (say's preannounce); "
        "null = the bundled one. Not played on the wake word: with echo cancellation off "
        "the recognizer would hear it over the person's first words",
    )
    done: str | None = option(
        None,
        check_optional(_TEXT),
        "WAV played when a request is understood but its answer waits (for the follow-on "
        "window or Home Assistant); null = the bundled one",
    )
    error: str | None = option(
        None,
        check_optional(_TEXT),
        "WAV for a failed request; null = the bundled one. Loaded and checked at start but "
        'not played yet: failures are spoken ("Sorry, Home Assistant did not answer.")',
    )


@dataclass(frozen=True)
class TtsSettings(Section):
    """Speech synthesis: which engine and voice, how fast, how high, how loud."""

    engine: str = option("espeak", check_choice(TTS_ENGINES), "espeak, piper or pocket")
    voice: str | None = option(
        None,
        check_optional(_TEXT),
        "espeak: a voice name (en-us, en+f3, ...); piper: a models manifest id, a .onnx "
        "path or a model name in models_dir; pocket: a voice name or a .wav/.safetensors "
        "path; null = the engine's default (en-us+klatt3, -, alba)",
    )
    rate_wpm: int = option(
        160, check_integer(80, 450, " words/min"), "Speaking rate, words per minute (80-450)"
    )
    pitch: int = option(50, check_integer(0, 100), "Base pitch (0-100, 50 = normal; espeak only)")
    volume: int = option(100, check_integer(0, 200, " %"), "Loudness, percent (0-200)")
    models_dir: str = option(
        "~/.local/share/pocket-satellite/models",
        _TEXT,
        "Folder where Piper model names are looked up (NAME.onnx + .onnx.json)",
    )
    npu_model: str | None = option(
        None,
        check_optional(_TEXT),
        "piper only: the voice converted to .rknn, run on a Rockchip NPU (RK3566/RK3568/"
        "RK3588, extra npu); null = onnxruntime on the CPU",
    )
    npu_input_length: int = option(
        256,
        check_integer(16, 4096, " phoneme ids"),
        "Phoneme ids per sentence the .rknn voice was converted for (16-4096)",
    )
    feedback: FeedbackSettings = subsection(FeedbackSettings)

    @property
    def resolved_voice(self) -> str | None:
        """The voice to use: the configured one or the engine's default."""
        return self.voice if self.voice is not None else DEFAULT_VOICES.get(self.engine)
