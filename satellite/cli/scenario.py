"""``pocket-satellite scenario OUT.wav``: speak the demo's scenario (satellite/scenario.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..scenario import ANSWER_SECONDS, write_scenario


def add_parser(sub: Any) -> None:
    """Register ``pocket-satellite scenario``."""
    parser = sub.add_parser("scenario", help="speak the demo's scenario into a WAV file")
    parser.add_argument("output", type=Path, help="the WAV to write (a .json script beside it)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    script = write_scenario(args.output)
    seconds = script[-1].end_seconds + ANSWER_SECONDS
    print(f"wrote {args.output} ({seconds:.0f} s, {len(script)} requests)", file=sys.stderr)
    return 0
