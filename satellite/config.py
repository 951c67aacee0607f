"""Configuration: one YAML file validated with voluptuous into frozen dataclasses.

Each subsystem has its own frozen dataclass, declared in its package's ``settings``
module (``frontend``, ``stt``, ``nlu``, ``prosody``, ``tts``, ``mqtt``); every field is
documented with its unit and range. The voluptuous schema for a section is built from
the dataclass defaults plus a validator per field, so a default lives in exactly one
place. This module composes the sections into ``Config`` and loads the YAML file.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import voluptuous as vol

from .audio.settings import PlayerSettings
from .config_base import (
    ConfigError,
    Section,
    check_choice,
    check_integer,
    check_optional,
    check_pattern,
    option,
    shorten,
    shown,
    subsection,
)
from .config_yaml import parse, read_text
from .frontend.settings import FrontendSettings
from .mqtt.settings import MqttSettings
from .nlu.settings import LlmSettings, NluSettings
from .prosody.settings import ProsodySettings
from .service.settings import MetricsSettings
from .stt.settings import SttSettings
from .tts.settings import TtsSettings

__all__ = ["Config", "ConfigError", "load", "validate"]

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass(frozen=True)
class SatelliteSettings(Section):
    """Identity of this satellite."""

    id: str = option(
        "pocket_satellite",
        check_pattern(
            r"[a-z0-9_]{1,32}",
            "a valid id. Fix: use 1-32 lower-case letters, digits or underscores",
        ),
        "MQTT id: 1-32 of a-z, 0-9, _",
    )
    name: str = option(
        "Pocket Satellite",
        check_pattern(r".{1,64}", "a valid name. Fix: use 1-64 characters"),
        "Display name",
    )
    language: str = option(
        "en",
        check_pattern(r"[a-z]{2}(_[A-Z]{2})?", "a language code. Fix: use a code like en or en_GB"),
        "Language code, e.g. en",
    )
    area: str | None = option(
        None,
        check_optional(
            check_pattern(r".{1,64}", "an area name. Fix: use 1-64 characters, or null")
        ),
        "The area (room) it stands in: 'turn on the lights' then means there",
    )


@dataclass(frozen=True)
class AudioSettings(Section):
    """Where audio comes from and goes to."""

    input: str = option(
        "alsa:default",
        check_pattern(r".+", "an input. Fix: write alsa:DEVICE, a .wav path or -"),
        "alsa:DEVICE, a WAV path, or - for raw 16 kHz mono S16 on stdin",
    )
    output: str = option(
        "alsa:default",
        check_pattern(r".+", "an output. Fix: write alsa:DEVICE, a .wav path or null"),
        "alsa:DEVICE, a WAV path, or null",
    )
    queue_ms: int = option(
        2000,
        check_integer(100, 60000, " ms"),
        "Bound of the capture and playback queues, ms (100-60000)",
    )


@dataclass(frozen=True)
class LoggingSettings(Section):
    """Logging."""

    level: str = option("INFO", check_choice(LOG_LEVELS), "DEBUG, INFO, WARNING or ERROR")

    def apply(self) -> None:
        """Log to standard error at this level (the command-line programs' set-up)."""
        logging.basicConfig(
            level=self.level,
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )


@dataclass(frozen=True)
class Config(Section):
    """The whole configuration."""

    satellite: SatelliteSettings = subsection(SatelliteSettings)
    audio: AudioSettings = subsection(AudioSettings)
    frontend: FrontendSettings = subsection(FrontendSettings)
    stt: SttSettings = subsection(SttSettings)
    nlu: NluSettings = subsection(NluSettings)
    llm: LlmSettings = subsection(LlmSettings)
    prosody: ProsodySettings = subsection(ProsodySettings)
    tts: TtsSettings = subsection(TtsSettings)
    player: PlayerSettings = subsection(PlayerSettings)
    mqtt: MqttSettings = subsection(MqttSettings)
    metrics: MetricsSettings = subsection(MetricsSettings)
    logging: LoggingSettings = subsection(LoggingSettings)


# --- loading ----------------------------------------------------------------------------


def validate(data: Any, source: str = "config") -> Config:
    """Validate a parsed YAML document; raise ConfigError listing every problem."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            source,
            [
                f"(top level): expected a mapping of sections, got {type(data).__name__}. "
                "Fix: start from config/satellite.yaml"
            ],
        )
    try:
        validated = vol.Schema(Config.schema())(data)
    except vol.MultipleInvalid as err:
        raise ConfigError(source, sorted({_describe(e) for e in err.errors})) from None
    try:
        return Config.from_validated(validated)
    except ConfigError as err:  # a section's cross-field check names only the keys
        raise ConfigError(source, err.problems) from None


def load(path: str | Path) -> Config:
    """Read and validate a YAML config file (bounded: see ``satellite.config_yaml``)."""
    path = Path(path)
    return validate(parse(read_text(path), str(path)), str(path))


def _describe(err: vol.Invalid) -> str:
    key = ".".join(shown(p, quote=False) for p in err.path) or "(top level)"
    message = shorten(err.error_message)
    if message == "extra keys not allowed":
        parent = err.path[:-1]
        known = _known_keys(parent)
        return (
            f"{key}: unknown key. Fix: remove it or use one of {', '.join(known)}"
            if known
            else f"{key}: unknown key. Fix: remove it"
        )
    return f"{key}: {message}"


def _known_keys(path: list[Any]) -> list[str]:
    cls: type[Section] = Config
    for part in path:
        match = [f for f in dataclasses.fields(cls) if f.name == part]  # type: ignore[arg-type]
        if not match or "section" not in match[0].metadata:
            return []
        cls = match[0].metadata["section"]
    return [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
