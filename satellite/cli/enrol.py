"""``pocket-satellite enrol``: adapt the recognizer to one speaker's voice.

``--prompts`` prints the sentences to record (one WAV each, 16 kHz mono, in order);
``--speaker NAME --input DIR`` adapts to them and stores the adaptation under
``stt.speakers_dir/NAME``. ``stt.speaker: NAME`` in the config makes the recognizer use it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..config import Config, load
from ..enrol import EnrolError, enrol, prompts, recordings


def add_parser(sub: Any) -> None:
    """Register the ``enrol`` subcommand on an argparse subparsers object."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "enrol", help="adapt speech recognition to one speaker from recordings of them"
    )
    parser.add_argument("--speaker", help="name of the speaker (letters, digits, - and _)")
    parser.add_argument(
        "--input",
        nargs="+",
        type=Path,
        help="a folder of 16 kHz mono WAV files, or WAV files (about 20 sentences)",
    )
    parser.add_argument(
        "--transcripts",
        type=Path,
        default=None,
        help="FILE.wav<TAB>words per line (default: transcripts.tsv beside the "
        "recordings, else the prompts in order)",
    )
    parser.add_argument("--config", type=Path, default=None, help="YAML configuration file")
    parser.add_argument(
        "--prompts", action="store_true", help="print the sentences to record, then exit"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    if args.prompts:
        for number, sentence in enumerate(prompts(), 1):
            print(f"{number:2d}  {sentence}")
        return 0
    if not args.speaker or not args.input:
        raise EnrolError(
            "enrol needs --speaker NAME and --input DIR (or WAV files). Fix: pocket-satellite "
            "enrol --prompts lists the sentences to record first"
        )
    config = load(args.config) if args.config is not None else Config()
    found = recordings(args.input, args.transcripts)
    seconds = sum(r.seconds for r in found)
    print(
        f"adapting to {args.speaker} from {len(found)} recordings ({seconds:.0f} s)",
        file=sys.stderr,
    )
    done = enrol(args.speaker, found, config.stt.speakers_dir, config.satellite.language)
    if done.ignored:
        print(
            f"{len(done.ignored)} recording(s) did not match their words and were left out: "
            + ", ".join(Path(p).name for p in done.ignored),
            file=sys.stderr,
        )
    print(
        f"enrolled {done.speaker}: {len(done.used)} recordings, {done.adapt_seconds:.1f} s "
        f"({done.adapt_cpu_seconds:.1f} s CPU) -> {done.mllr_path.parent}\n"
        f"use it with stt.speaker: {done.speaker}"
    )
    return 0
