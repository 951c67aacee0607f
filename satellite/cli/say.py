"""``pocket-satellite say "text" [--output reply.wav] [--voice V]``."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import re
import sys
from collections.abc import Iterable, Iterator
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

_SURROGATE = re.compile("[\ud800-\udfff]")


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
    stdin = StdinLines(getattr(sys.stdin, "buffer", sys.stdin)) if args.text == "-" else None
    text: str | Iterator[str] = iter(stdin) if stdin is not None else args.text
    if isinstance(text, str):
        _check_text(text)
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
    if stdin is not None and stdin.bad_lines:
        raise SatelliteError(
            f"{stdin.bad_lines} line(s) of stdin were not UTF-8 and were not spoken. Fix: "
            "send UTF-8 text (e.g. through 'iconv -t UTF-8')"
        )
    if not reply.pieces:
        raise SatelliteError("Nothing was said: the text held no words")
    seconds = player.position_seconds
    print(f"said {len(reply.pieces)} piece(s), {seconds:.2f} s of audio", file=sys.stderr)
    return 0


def _check_text(text: str) -> None:
    """Raise TtsError for empty text, or text that is not valid UTF-8: bytes that are not
    reach ``sys.argv`` as lone surrogates (Python's ``surrogateescape``)."""
    if not text.strip():
        raise TtsError("Nothing to say: the text is empty. Fix: pass some words")
    found = _SURROGATE.search(text)
    if found is not None:
        code = ord(found.group())
        what = f"the byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "a surrogate"
        raise TtsError(
            f"The text is not valid UTF-8 ({what} at character {found.start()}). Fix: pass "
            "UTF-8 text (check the terminal's locale, or convert it with 'iconv -t UTF-8')"
        )


class StdinLines:
    """Lines of a byte stream as they arrive; a line that is not UTF-8 is reported on
    stderr, counted in ``bad_lines`` and skipped (the rest is still spoken)."""

    def __init__(self, stream: Iterable[bytes | str]) -> None:
        self.stream = stream
        self.bad_lines = 0

    def __iter__(self) -> Iterator[str]:
        for number, raw in enumerate(self.stream, start=1):
            if isinstance(raw, str):  # a text stream (decoded already)
                yield raw
                continue
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as err:
                self.bad_lines += 1
                print(
                    f"error: stdin line {number} is not UTF-8 (byte 0x{raw[err.start]:02x} at "
                    f"offset {err.start}); skipped it",
                    file=sys.stderr,
                    flush=True,
                )
