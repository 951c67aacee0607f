"""Settings of speech to text (config section ``stt``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config_base import _boolean, _choice, _integer, _number, _opt, _optional, _pattern, _Section

STT_ENGINES = ("pocketsphinx", "faster_whisper", "whisper_cpp", "vosk")
STT_INPUTS = ("auto", "raw", "denoised")


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
