"""``pocket-satellite prosody``: speech rate of every utterance in a recording.

The front end runs continuously (no wake word); every utterance the VAD finds is
measured and printed as one JSON object (a ``prosody`` event) per line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from pathlib import Path
from typing import Any

from ..audio.io import open_source
from ..config import Config, load
from ..events import Event, UtteranceEnded
from ..pipeline import build_pipeline
from ..prosody.monitor import ProsodyMonitor
from ..prosody.settings import ProsodySettings

_LOGGER = logging.getLogger(__name__)


def add_parser(sub: Any) -> None:
    """Register the ``prosody`` subcommand on an argparse subparsers object."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "prosody", help="print the speech rate of every utterance in a WAV file as JSON lines"
    )
    parser.add_argument(
        "--input",
        required=True,
        help="FILE.wav (any rate, mono or stereo), or - for raw 16 kHz mono S16LE on stdin",
    )
    parser.add_argument("--config", type=Path, default=None, help="YAML configuration file")
    parser.add_argument("--speaker", default=None, help="name of the speaker, if known")
    parser.add_argument(
        "--state",
        default=None,
        help="baseline file to read and update (default: prosody.state_path "
        "from the config; none keeps baselines in memory)",
    )
    parser.add_argument(
        "--alerts", action="store_true", help="also print alert and alert_cleared events"
    )
    parser.set_defaults(func=run)


def settings_from(config: Config) -> ProsodySettings:
    """The prosody section of a configuration."""
    return config.prosody


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    config = load(args.config) if args.config is not None else Config()
    config.logging.apply()
    settings = settings_from(config)
    if args.state is not None:
        settings = _with_state(settings, args.state)
    print(f"measuring speech rate in {args.input}", file=sys.stderr)
    monitor = ProsodyMonitor(settings)
    for event in measure_file(args.input, config, monitor, args.speaker):
        if event.type_name == "prosody" or args.alerts:
            print(json.dumps(event.to_dict()), flush=True)
    return 0


def measure_file(
    spec: str, config: Config, monitor: ProsodyMonitor, speaker: str | None = None
) -> list[Event]:
    """Every prosody, alert and clear event for the utterances in an input."""
    pipeline = build_pipeline(config, continuous=True)
    source = open_source(spec, queue_ms=config.audio.queue_ms)
    events: list[Event] = []
    try:
        for chunk in source:
            events.extend(_judge(monitor, pipeline.process(chunk), speaker))
    finally:
        source.close()
    # a last utterance still being spoken when the file ends is measured too
    events.extend(_judge(monitor, pipeline.end_of_input(), speaker))
    return events


def _judge(monitor: ProsodyMonitor, events: list[Event], speaker: str | None) -> list[Event]:
    out: list[Event] = []
    for event in events:
        if isinstance(event, UtteranceEnded) and event.audio is not None:
            out.extend(monitor.process(event, speaker=speaker))
    return out


def _with_state(settings: ProsodySettings, path: str) -> ProsodySettings:
    return dataclasses.replace(settings, state_path=None if path == "none" else path)
