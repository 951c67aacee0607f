"""``pocket-satellite say "text" [--output reply.wav] [--voice V]``."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..audio.io import open_sink
from ..audio.player import Player
from ..audio.settings import PlayerSettings
from ..config import Config, load
from ..errors import SatelliteError
from ..tts.base import TtsError
from ..tts.engines import make_engine
from ..tts.settings import TTS_ENGINES, TtsSettings
from ..tts.speaker import Speaker

_LOGGER = logging.getLogger(__name__)


def add_parser(sub: Any) -> None:
    """Register the ``say`` subcommand on the CLI's subparsers."""
    say = sub.add_parser("say", help="speak text aloud or into a WAV file")
    say.add_argument(
        "text", nargs="?", default=None, help="what to say; - reads lines from stdin as they arrive"
    )
    say.add_argument(
        "--output",
        default=None,
        help="FILE.wav, alsa:DEVICE or null; default: audio.output from the config",
    )
    say.add_argument("--voice", default=None, help="voice (default: tts.voice from the config)")
    say.add_argument(
        "--engine",
        choices=TTS_ENGINES,
        default=None,
        help="engine (default: tts.engine from the config)",
    )
    say.add_argument("--rate", type=int, default=None, help="words per minute (80-450)")
    say.add_argument("--config", type=Path, default=None, help="YAML configuration file")
    say.add_argument("--list-voices", action="store_true", help="print the engine's voices")
    say.set_defaults(func=run_say)


def settings_from(config: Config) -> tuple[TtsSettings, PlayerSettings]:
    """The TTS and player sections of the configuration."""
    return config.tts, config.player


def run_say(args: argparse.Namespace) -> int:
    """Speak ``args.text``; return the exit code."""
    config = load(args.config) if args.config is not None else Config()
    config.logging.apply()
    tts, player_settings = settings_from(config)
    if args.engine is not None:
        tts = dataclasses.replace(tts, engine=args.engine, voice=None)
    if args.rate is not None:
        if not 80 <= args.rate <= 450:
            raise TtsError(f"--rate {args.rate} is out of range. Fix: use 80-450 words/min")
        tts = dataclasses.replace(tts, rate_wpm=args.rate)
    engine = make_engine(tts, args.voice)
    if args.list_voices:
        for name in engine.voices():
            print(name)
        return 0
    if args.text is None:
        raise TtsError("Nothing to say. Fix: pass the text, or - to read it from stdin")
    text: str | Iterator[str] = _stdin_lines() if args.text == "-" else args.text
    if isinstance(text, str) and not text.strip():
        raise TtsError("Nothing to say: the text is empty. Fix: pass some words")
    spec = args.output or config.audio.output
    voice = args.voice or tts.resolved_voice or "(default)"
    print(f"speaking with {tts.engine} voice {voice} to {spec}", file=sys.stderr)
    sink = open_sink(
        spec, rate_hz=player_settings.rate_hz, queue_ms=player_settings.device_queue_ms
    )
    player = Player(sink, player_settings)
    speaker = Speaker(engine, player)  # the engine was built with the voice
    try:
        reply = speaker.say(text)
        reply.wait()
        player.wait()
    except KeyboardInterrupt:
        speaker.stop()
        raise
    finally:
        speaker.close()
        player.close()
        engine.close()
    if not reply.pieces:
        raise SatelliteError("Nothing was said: the text held no words")
    seconds = player.position_seconds
    print(f"said {len(reply.pieces)} piece(s), {seconds:.2f} s of audio", file=sys.stderr)
    return 0


def _stdin_lines() -> Iterator[str]:
    yield from sys.stdin
