"""Settings of the audio front end (config section ``frontend``).

One section per stage: noise suppression, gain, VAD, wake word, utterance recorder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import voluptuous as vol

from ..config_base import (
    ConfigError,
    Section,
    check_boolean,
    check_choice,
    check_integer,
    check_number,
    check_optional,
    option,
    subsection,
)
from .echo_settings import EchoSettings

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
class NoiseSettings(Section):
    """Noise suppression on 10 ms frames."""

    engine: str = option("speex", check_choice(NOISE_ENGINES), "speex, webrtc or off")
    suppression_db: int = option(
        30, check_integer(0, 60, " dB"), "speex: maximum attenuation of noise, dB (0-60)"
    )
    webrtc_level: int = option(2, check_integer(0, 4), "webrtc: suppression level (0-4)")


@dataclass(frozen=True)
class GainSettings(Section):
    """Automatic gain control after noise suppression."""

    enabled: bool = option(True, check_boolean, "Apply automatic gain")
    target_dbfs: float = option(
        -20.0, check_number(-40.0, -3.0, " dBFS"), "Speech level to aim for, dBFS (-40 to -3)"
    )
    max_gain_db: float = option(
        24.0, check_number(0.0, 40.0, " dB"), "Largest gain applied, dB (0-40)"
    )


@dataclass(frozen=True)
class VadSettings(Section):
    """Voice activity detection."""

    engine: str = option("silero", check_choice(VAD_ENGINES), "silero or micro")
    threshold: float = option(
        0.5, check_number(0.05, 0.95), "Speech probability threshold (0.05-0.95)"
    )


#: What the wake word may hear (see WakeSettings.hears).
WAKE_INPUTS = ("webrtc", "raw", "denoised")
#: WebRTC's suppression level when the wake word hears ``webrtc`` (0-4).
WAKE_WEBRTC_LEVEL = 2
#: How far what the wake word hears is turned down between the person's syllables, dB
#: (frontend/expander.py; bench/wake_expander.py).
WAKE_EXPAND_DB = 40.0
#: Detections peaking in [this, the cutoff) are checked (bench/wake_band.py).
WAKE_CHECKED_ABOVE = 0.2
#: The lowest band floor allowed: below it every syllable would be checked.
MIN_CHECKED_ABOVE = 0.05


@dataclass(frozen=True)
class WakeSettings(Section):
    """Wake word detection."""

    models: tuple[str, ...] = field(
        default=("okay_nabu",), metadata={"check": _wake_models, "doc": "Wake words to listen for"}
    )
    probability_cutoff: float | None = option(
        None,
        check_optional(check_number(0.1, 0.99)),
        "Detection threshold (0.1-0.99); null = model's own",
    )
    refractory_seconds: float = option(
        2.0, check_number(0.0, 30.0, " s"), "Ignore further detections for this long, s (0-30)"
    )
    hears: str = option(
        "webrtc",
        check_choice(WAKE_INPUTS),
        "What the wake word hears: webrtc (its own WebRTC suppression, level 2), raw, "
        "or denoised (what frontend.noise gives the recognizer)",
    )
    expand_db: float = option(
        WAKE_EXPAND_DB,
        check_number(0.0, 60.0, " dB"),
        "Turn what the wake word hears down between the loud person's syllables, at most "
        "this much, dB (0-60; 0: off): other voices in the room fill those gaps",
    )
    checked_above: float | None = option(
        WAKE_CHECKED_ABOVE,
        check_optional(check_number(0.0, 0.95)),
        "A detection peaking below the cutoff but above this (0.05-0.95) is taken only when "
        "a second check (PocketSphinx) hears the wake phrase in the audio before it; "
        "0 or null: off (only the cutoff decides)",
    )

    def __post_init__(self) -> None:
        floor = self.checked_above
        if floor and floor < MIN_CHECKED_ABOVE:
            raise ConfigError(
                "config",
                [
                    f"frontend.wake.checked_above: {floor} is too low to be checked. Fix: "
                    f"use 0 (off) or a value from {MIN_CHECKED_ABOVE} to 0.95"
                ],
            )
        cutoff = self.probability_cutoff
        if floor and cutoff is not None and floor >= cutoff:
            raise ConfigError(
                "config",
                [
                    f"frontend.wake.checked_above: {floor} is not below "
                    f"probability_cutoff ({cutoff}), so nothing would be checked. Fix: "
                    "lower checked_above, or set it to 0 (off)"
                ],
            )


@dataclass(frozen=True)
class RecorderSettings(Section):
    """How an utterance is cut out of the stream after the wake word."""

    pre_roll_ms: int = option(
        500, check_integer(300, 2000, " ms"), "Audio kept from before the onset, ms (300-2000)"
    )
    trailing_silence_ms: int = option(
        700, check_integer(100, 5000, " ms"), "Silence that ends an utterance, ms (100-5000)"
    )
    max_utterance_seconds: float = option(
        15.0, check_number(1.0, 120.0, " s"), "Longest utterance, s (1-120)"
    )
    listen_timeout_seconds: float = option(
        5.0, check_number(0.5, 60.0, " s"), "Give up when no speech follows the wake word, s"
    )
    min_speech_ms: int = option(
        90, check_integer(30, 1000, " ms"), "Speech needed to count as an onset, ms (30-1000)"
    )
    follow_on_ms: int = option(
        1000,
        check_integer(0, 5000, " ms"),
        "After the wake word's utterance: speech that begins this soon after its end is "
        "heard too, with no wake word, ms (0: off)",
    )
    against_room_level: bool = option(
        True,
        check_boolean,
        "Judge speech against the room's level (babble, a television): an onset must stand "
        "out of it, and speech back at it counts as silence",
    )


@dataclass(frozen=True)
class FrontendSettings(Section):
    """The audio front end, stage by stage."""

    echo: EchoSettings = subsection(EchoSettings)
    noise: NoiseSettings = subsection(NoiseSettings)
    gain: GainSettings = subsection(GainSettings)
    vad: VadSettings = subsection(VadSettings)
    wake: WakeSettings = subsection(WakeSettings)
    recorder: RecorderSettings = subsection(RecorderSettings)
