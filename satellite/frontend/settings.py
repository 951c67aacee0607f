"""Settings of the audio front end (config section ``frontend``).

One section per stage: noise suppression, gain, VAD, wake word, utterance recorder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import voluptuous as vol

from ..config_base import _boolean, _choice, _integer, _number, _opt, _optional, _Section, _section

WAKE_MODELS = ("okay_nabu", "hey_jarvis", "alexa", "hey_mycroft")
NOISE_ENGINES = ("speex", "webrtc", "off")
VAD_ENGINES = ("silero", "micro")


def _wake_models(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list) or not value:
        raise vol.Invalid(
            f"expected a non-empty list of wake words, got {value!r}. Fix: "
            f"list one or more of {', '.join(WAKE_MODELS)}"
        )
    for item in value:
        if item not in WAKE_MODELS:
            raise vol.Invalid(
                f"unknown wake word {item!r}. Fix: use one or more of {', '.join(WAKE_MODELS)}"
            )
    if len(set(value)) != len(value):
        raise vol.Invalid("a wake word is listed twice. Fix: list each wake word once")
    return tuple(value)


@dataclass(frozen=True)
class NoiseSettings(_Section):
    """Noise suppression on 10 ms frames."""

    engine: str = _opt("speex", _choice(NOISE_ENGINES), "speex, webrtc or off")
    suppression_db: int = _opt(
        30, _integer(0, 60, " dB"), "speex: maximum attenuation of noise, dB (0-60)"
    )
    webrtc_level: int = _opt(2, _integer(0, 4), "webrtc: suppression level (0-4)")


@dataclass(frozen=True)
class GainSettings(_Section):
    """Automatic gain control after noise suppression."""

    enabled: bool = _opt(True, _boolean, "Apply automatic gain")
    target_dbfs: float = _opt(
        -20.0, _number(-40.0, -3.0, " dBFS"), "Speech level to aim for, dBFS (-40 to -3)"
    )
    max_gain_db: float = _opt(24.0, _number(0.0, 40.0, " dB"), "Largest gain applied, dB (0-40)")


@dataclass(frozen=True)
class VadSettings(_Section):
    """Voice activity detection."""

    engine: str = _opt("silero", _choice(VAD_ENGINES), "silero or micro")
    threshold: float = _opt(0.5, _number(0.05, 0.95), "Speech probability threshold (0.05-0.95)")


@dataclass(frozen=True)
class WakeSettings(_Section):
    """Wake word detection."""

    models: tuple[str, ...] = field(
        default=("okay_nabu",), metadata={"check": _wake_models, "doc": "Wake words to listen for"}
    )
    probability_cutoff: float | None = _opt(
        None, _optional(_number(0.1, 0.99)), "Detection threshold (0.1-0.99); null = model's own"
    )
    refractory_seconds: float = _opt(
        2.0, _number(0.0, 30.0, " s"), "Ignore further detections for this long, s (0-30)"
    )


@dataclass(frozen=True)
class RecorderSettings(_Section):
    """How an utterance is cut out of the stream after the wake word."""

    pre_roll_ms: int = _opt(
        500, _integer(300, 2000, " ms"), "Audio kept from before the onset, ms (300-2000)"
    )
    trailing_silence_ms: int = _opt(
        700, _integer(100, 5000, " ms"), "Silence that ends an utterance, ms (100-5000)"
    )
    max_utterance_seconds: float = _opt(
        15.0, _number(1.0, 120.0, " s"), "Longest utterance, s (1-120)"
    )
    listen_timeout_seconds: float = _opt(
        5.0, _number(0.5, 60.0, " s"), "Give up when no speech follows the wake word, s"
    )
    min_speech_ms: int = _opt(
        90, _integer(30, 1000, " ms"), "Speech needed to count as an onset, ms (30-1000)"
    )
    follow_on_ms: int = _opt(
        1000,
        _integer(0, 5000, " ms"),
        "After the wake word's utterance: speech that begins this soon after its end is "
        "heard too, with no wake word, ms (0: off)",
    )


@dataclass(frozen=True)
class FrontendSettings(_Section):
    """The audio front end, stage by stage."""

    noise: NoiseSettings = _section(NoiseSettings)
    gain: GainSettings = _section(GainSettings)
    vad: VadSettings = _section(VadSettings)
    wake: WakeSettings = _section(WakeSettings)
    recorder: RecorderSettings = _section(RecorderSettings)
