"""Configuration: one YAML file validated with voluptuous into frozen dataclasses.

Each subsystem has its own frozen dataclass; every field is documented with its unit
and range. The voluptuous schema for a section is built from the dataclass defaults
plus a validator per field, so a default lives in exactly one place.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import voluptuous as vol
import yaml

from .audio.settings import PlayerSettings
from .config_base import (
    ConfigError,
    _boolean,
    _choice,
    _integer,
    _number,
    _opt,
    _optional,
    _pattern,
    _Section,
    _section,
)
from .mqtt.settings import MqttSettings
from .prosody.settings import ProsodySettings
from .tts.settings import TtsSettings

__all__ = ["Config", "ConfigError", "load", "validate"]

WAKE_MODELS = ("okay_nabu", "hey_jarvis", "alexa", "hey_mycroft")
NOISE_ENGINES = ("speex", "webrtc", "off")
VAD_ENGINES = ("silero", "micro")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


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
class SatelliteSettings(_Section):
    """Identity of this satellite."""

    id: str = _opt(
        "pocket_satellite",
        _pattern(
            r"[a-z0-9_]{1,32}",
            "a valid id. Fix: use 1-32 lower-case letters, digits or underscores",
        ),
        "MQTT id: 1-32 of a-z, 0-9, _",
    )
    name: str = _opt(
        "Pocket Satellite",
        _pattern(r".{1,64}", "a valid name. Fix: use 1-64 characters"),
        "Display name",
    )
    language: str = _opt(
        "en",
        _pattern(r"[a-z]{2}(_[A-Z]{2})?", "a language code. Fix: use a code like en or en_GB"),
        "Language code, e.g. en",
    )
    area: str | None = _opt(
        None,
        _optional(_pattern(r".{1,64}", "an area name. Fix: use 1-64 characters, or null")),
        "The area (room) it stands in: 'turn on the lights' then means there",
    )


@dataclass(frozen=True)
class AudioSettings(_Section):
    """Where audio comes from and goes to."""

    input: str = _opt(
        "alsa:default",
        _pattern(r".+", "an input. Fix: write alsa:DEVICE, a .wav path or -"),
        "alsa:DEVICE, a WAV path, or - for raw 16 kHz mono S16 on stdin",
    )
    output: str = _opt(
        "alsa:default",
        _pattern(r".+", "an output. Fix: write alsa:DEVICE, a .wav path or null"),
        "alsa:DEVICE, a WAV path, or null",
    )
    queue_ms: int = _opt(
        2000,
        _integer(100, 60000, " ms"),
        "Bound of the capture and playback queues, ms (100-60000)",
    )


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


STT_ENGINES = ("pocketsphinx", "faster_whisper", "whisper_cpp", "vosk")
STT_INPUTS = ("auto", "raw", "denoised")
DEFAULT_INTENTS = (
    "HassTurnOn",
    "HassTurnOff",
    "HassLightSet",
    "HassGetState",
    "HassNevermind",
    "HassStartTimer",
    "CallForHelp",
    "GetTime",
    "GetDate",
    "Repeat",
    "Stop",
    "VolumeUp",
    "VolumeDown",
)
DEFAULT_ENTITIES: tuple[dict[str, str], ...] = (
    {"name": "kitchen light", "domain": "light", "area": "kitchen"},
    {"name": "bedroom lamp", "domain": "light", "area": "bedroom"},
    {"name": "living room light", "domain": "light", "area": "living room"},
    {"name": "reading lamp", "domain": "light", "area": "study"},
    {"name": "ceiling fan", "domain": "fan", "area": "living room"},
    {"name": "front door", "domain": "lock", "area": "hall"},
    {"name": "television", "domain": "media_player", "area": "living room"},
    {"name": "heater", "domain": "climate", "area": "bathroom"},
)


def _names(what: str) -> Callable[[Any], tuple[str, ...]]:
    def check(value: Any) -> tuple[str, ...]:
        if isinstance(value, tuple):
            value = list(value)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise vol.Invalid(
                f"expected a list of {what}, got {value!r}. Fix: write a YAML list such as [a, b]"
            )
        return tuple(value)

    return check


def _entities(value: Any) -> tuple[dict[str, str], ...]:
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        raise vol.Invalid(
            f"expected a list of entities, got {value!r}. Fix: list items "
            "like {name: kitchen light, domain: light, area: kitchen}"
        )
    out = []
    for index, item in enumerate(value):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(item.get("domain"), str)
            or not set(item) <= {"name", "domain", "area"}
            or not isinstance(item.get("area", ""), str)
        ):
            raise vol.Invalid(
                f"item {index} is not an entity ({item!r}). Fix: give name and "
                "domain (and optionally area), e.g. {name: kitchen light, "
                "domain: light, area: kitchen}"
            )
        out.append(dict(item))
    return tuple(out)


@dataclass(frozen=True)
class SttSettings(_Section):
    """Speech to text."""

    engine: str = _opt(
        "pocketsphinx", _choice(STT_ENGINES), "pocketsphinx, faster_whisper, whisper_cpp or vosk"
    )
    model_path: str | None = _opt(
        None, _optional(_pattern(r".+", "a path")), "Model for faster_whisper, whisper_cpp or vosk"
    )
    rejection_threshold: float = _opt(
        -34.0,
        _number(-100.0, 50.0),
        "Per-frame grammar vs phone-loop score below which speech is out of domain (-100 to 50)",
    )
    word_weight: float = _opt(
        0.25,
        _number(0.0, 5.0),
        "Weight of the second-worst word's score in the utterance score (0-5; 0 = off)",
    )
    device_margin: float = _opt(
        8.0,
        _number(0.0, 50.0),
        "How much more score a device action needs than other intents (0-50)",
    )
    home_margin: float = _opt(
        5.0,
        _number(0.0, 50.0),
        "How much more score Home Assistant's other intents need than care intents (0-50)",
    )
    loud_shift: float = _opt(
        8.0,
        _number(0.0, 50.0),
        "How much more score every intent needs in a loud room (0-50)",
    )
    agree_when_loud: bool = _opt(
        True,
        _boolean,
        "In a loud room a device action needs the raw and the denoised hearing to agree",
    )
    own_mean_retry: bool = _opt(
        True,
        _boolean,
        "Search an utterance the streaming search did not trust again, from its own mean",
    )
    own_mean_shift: float = _opt(
        6.0,
        _number(0.0, 50.0),
        "How much more score a result of that search needs (0-50)",
    )
    early_endpoint_ms: int = _opt(
        250, _integer(0, 2000, " ms"), "Trailing silence that ends a complete command, ms; 0 = off"
    )
    early_endpoint_margin: float = _opt(
        6.0,
        _number(0.0, 50.0),
        "How much more score a command needs to end the utterance early (0-50)",
    )
    follow_on_margin: float = _opt(
        6.0,
        _number(0.0, 50.0),
        "How much more score a follow-on (the sentence heard again after a pause) needs (0-50)",
    )
    hearing: str = _opt(
        "auto",
        _choice(STT_INPUTS),
        "What the recognizer hears: auto (denoised only in a loud room), raw or denoised",
    )
    denoise_below_db: float = _opt(
        18.0,
        _number(0.0, 60.0, " dB"),
        "auto: speech-to-noise ratio below which the recognizer hears denoised audio, dB (0-60)",
    )
    open_transcripts: bool = _opt(
        True, _boolean, "Transcribe out-of-domain speech with the full language model (for the LLM)"
    )
    cache_dir: str = _opt(
        "~/.cache/pocket-satellite/grammars",
        _pattern(r".+", "a path"),
        "Where compiled grammars are kept",
    )


@dataclass(frozen=True)
class NluSettings(_Section):
    """Intents and the things they talk about."""

    intents: tuple[str, ...] = field(
        default=DEFAULT_INTENTS, metadata={"check": _names("intent names"), "doc": "Active intents"}
    )
    entities: tuple[dict[str, str], ...] = field(
        default=DEFAULT_ENTITIES,
        metadata={"check": _entities, "doc": "Devices: name, domain, area"},
    )
    areas: tuple[str, ...] = field(
        default=("garden",),
        metadata={"check": _names("area names"), "doc": "Areas besides the entities' own"},
    )
    ha_timeout_seconds: float = _opt(
        5.0, _number(0.5, 60.0, " s"), "Wait this long for HA's answer, s (0.5-60)"
    )


@dataclass(frozen=True)
class LlmSettings(_Section):
    """The small local LLM that classifies what the templates miss."""

    enabled: bool = _opt(True, _boolean, "Use the LLM fallback (needs the llm extra)")
    model: str = _opt(
        "gemma3-270m",
        _pattern(r".+", "a model"),
        "gemma3-270m (from its PyPI package) or a .gguf path",
    )
    threads: int = _opt(1, _integer(1, 8), "CPU threads (1-8)")
    timeout_seconds: float = _opt(
        2.0, _number(0.1, 30.0, " s"), "Give up and answer 'not understood' after, s"
    )
    min_confidence: float = _opt(
        0.3, _number(0.0, 1.0), "Below this label probability: not understood (0-1)"
    )


@dataclass(frozen=True)
class LoggingSettings(_Section):
    """Logging."""

    level: str = _opt("INFO", _choice(LOG_LEVELS), "DEBUG, INFO, WARNING or ERROR")

    def apply(self) -> None:
        """Log to standard error at this level (the command-line programs' set-up)."""
        logging.basicConfig(
            level=self.level,
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )


@dataclass(frozen=True)
class Config(_Section):
    """The whole configuration."""

    satellite: SatelliteSettings = _section(SatelliteSettings)
    audio: AudioSettings = _section(AudioSettings)
    frontend: FrontendSettings = _section(FrontendSettings)
    stt: SttSettings = _section(SttSettings)
    nlu: NluSettings = _section(NluSettings)
    llm: LlmSettings = _section(LlmSettings)
    prosody: ProsodySettings = _section(ProsodySettings)
    tts: TtsSettings = _section(TtsSettings)
    player: PlayerSettings = _section(PlayerSettings)
    mqtt: MqttSettings = _section(MqttSettings)
    logging: LoggingSettings = _section(LoggingSettings)


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
    """Read and validate a YAML config file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            str(path),
            [
                "(file): not found. Fix: pass the path of an existing file, e.g. "
                "config/satellite.yaml"
            ],
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(
            str(path),
            [
                f"(file): cannot be read ({err}). Fix: check the "
                "file's permissions and that it is UTF-8 text"
            ],
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown place"
        raise ConfigError(
            str(path),
            [f"(syntax): invalid YAML at {where}. Fix: correct the indentation or quoting there"],
        ) from None
    return validate(data, str(path))


def _describe(err: vol.Invalid) -> str:
    key = ".".join(str(p) for p in err.path) or "(top level)"
    message = err.error_message
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
    cls: type[_Section] = Config
    for part in path:
        match = [f for f in dataclasses.fields(cls) if f.name == part]  # type: ignore[arg-type]
        if not match or "section" not in match[0].metadata:
            return []
        cls = match[0].metadata["section"]
    return [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
