"""The ``pocket-satellite`` command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..audio.io import open_source
from ..config import Config, ConfigError, load
from ..errors import SatelliteError
from ..pipeline import build_pipeline
from .doctor import add_parser as add_doctor_command
from .enrol import add_parser as add_enrol_command
from .prosody import add_parser as add_prosody_command
from .run import add_run_command
from .say import add_parser as add_say_command
from .scenario import add_parser as add_scenario_command
from .understand import add_parser as add_understand_command

EXIT_CONFIG = 2
EXIT_RUNTIME = 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_CONFIG
    except SatelliteError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        return 130
    return result


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pocket-satellite", description="Offline voice satellite for Home Assistant"
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check-config", help="validate a configuration file")
    check.add_argument("file", type=Path)
    check.set_defaults(func=_check_config)

    models = sub.add_parser("models", help="check the model files the manifest lists")
    models.set_defaults(func=_models)

    listen = sub.add_parser("listen", help="run the front end and print events as JSON lines")
    listen.add_argument(
        "--input",
        default=None,
        help="FILE.wav, alsa:DEVICE or - (raw 16 kHz mono S16LE on stdin); "
        "default: audio.input from the config",
    )
    listen.add_argument("--config", type=Path, default=None, help="YAML configuration file")
    listen.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="stop after this much captured audio (ALSA input)",
    )
    listen.set_defaults(func=_listen)
    add_run_command(sub)
    add_scenario_command(sub)
    add_say_command(sub)
    add_prosody_command(sub)
    add_understand_command(sub)
    add_doctor_command(sub)
    add_enrol_command(sub)
    return parser


def _load_config(path: Path | None) -> Config:
    return load(path) if path is not None else Config()


def _check_config(args: argparse.Namespace) -> int:
    config = load(args.file)
    print(
        f"{args.file}: OK (satellite {config.satellite.id!r}, "
        f"wake words {', '.join(config.frontend.wake.models)})"
    )
    return 0


def _models(args: argparse.Namespace) -> int:
    from ..models import check, load_manifest  # noqa: PLC0415

    statuses = [check(entry) for entry in load_manifest()]
    for status in statuses:
        where = status.location or "-"
        verdict = "ok" if status.ok else status.problem
        print(f"{status.entry.id:20} {status.entry.source:24} {verdict}  ({where})")
    return 0 if all(s.ok for s in statuses) else EXIT_RUNTIME


def _listen(args: argparse.Namespace) -> int:
    config = _load_config(args.config)
    config.logging.apply()
    spec = args.input or config.audio.input
    print(f"listening on {spec} for {', '.join(config.frontend.wake.models)}", file=sys.stderr)
    pipeline = build_pipeline(config)
    source = open_source(spec, queue_ms=config.audio.queue_ms, max_seconds=args.max_seconds)
    try:
        for chunk in source:
            for event in pipeline.process(chunk):
                print(json.dumps(event.to_dict()), flush=True)
    finally:
        source.close()
    for event in pipeline.end_of_input():
        print(json.dumps(event.to_dict()), flush=True)
    xruns = getattr(source, "xruns", 0)
    dropped = getattr(source, "dropped_chunks", 0)
    if xruns or dropped:
        print(
            f"audio input: {xruns} xrun(s) recovered, {dropped} chunk(s) dropped", file=sys.stderr
        )
    return 0
