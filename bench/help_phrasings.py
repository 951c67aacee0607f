"""Free phrasings of a call for help (tests/data/help_phrasings.txt), said after the wake
word in every corpus voice, clean: what the first hearing came to, per voice family.

Run on one core:  taskset -c 1 python bench/help_phrasings.py [--families festival ...]
[--no-bare-ask] [--name NAME]

The phrasings are outside CallForHelp's templates: the grammar search forces them into
some command, and the LLM fallback (not loaded here) is what reads them as calls. What
must never happen is a device action at once: a person asking for help gets a light
switched and no alert. Each phrasing (seed: its index) is replayed through the satellite
(default configuration, no LLM, no question open) and its first answer counted: a call
sent at once or asked about, a device action at once or asked about, another intent at
once or asked about, not understood (the LLM's to read), no wake. ``--no-bare-ask``:
with ``stt.ask_about_bare_names`` off (a device action heard as a bare name acted on at
once, as before it was asked about).

Writes bench/results/<NAME>.json (default ``help_phrasings``) and prints the table.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from bench.false_help import first_hearing
from satellite.config import validate
from satellite.nlu.intents import DEVICE_ACTION_INTENTS
from tests import corpus, robustness
from tests.understand import lines

HELP = "CallForHelp"
OUTCOMES = (
    "call_sent",
    "call_asked",
    "device_at_once",
    "device_asked",
    "other_at_once",
    "other_asked",
    "not_understood",
    "no_wake",
)


def outcome(woke: bool, intent: str | None, doubtful: bool) -> str:
    """What came of one phrasing."""
    if not woke:
        return "no_wake"
    if intent is None:
        return "not_understood"
    kind = "call" if intent == HELP else "device" if intent in DEVICE_ACTION_INTENTS else "other"
    if kind == "call":
        return "call_asked" if doubtful else "call_sent"
    return f"{kind}_asked" if doubtful else f"{kind}_at_once"


def run(voices: list[corpus.Voice], bare_ask: bool) -> dict[str, Any]:
    config = validate({"stt": {"ask_about_bare_names": bare_ask}})
    understanding = robustness.listener(config)
    room = corpus.Room("clean")
    table: dict[str, dict[str, int]] = {}
    every: list[list[Any]] = []
    for family in corpus.FAMILIES:
        tally: Counter[str] = Counter()
        for voice in [v for v in voices if v.family == family]:
            for index, text in enumerate(lines("help_phrasings.txt")):
                woke, intent, doubtful, _ = first_hearing(understanding, voice, text, room, index)
                report = list(understanding.reports.values())[-1]
                heard = report.stt.text if report.stt is not None else ""
                what = outcome(woke, intent, doubtful)
                tally["n"] += 1
                tally[what] += 1
                every.append([voice.label, text, what, intent, doubtful, heard])
        table[family] = dict(tally)
        print(f"  {family}: {dict(tally)}", flush=True)
    return {
        "voices": [v.label for v in voices],
        "ask_about_bare_names": bare_ask,
        "table": table,
        #: Every phrasing: voice, said, outcome, intent, doubtful, what the search heard.
        "every": every,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--families", nargs="*", choices=corpus.FAMILIES, help="only these voice families"
    )
    parser.add_argument("--no-bare-ask", action="store_true", help="stt.ask_about_bare_names off")
    parser.add_argument("--name", default=None, help="bench/results/NAME.json")
    args = parser.parse_args()
    voices = corpus.available(corpus.VOICES_ALL)
    if args.families:
        voices = [v for v in voices if v.family in args.families]
    print(f"{len(voices)} voices, clean, after the wake word (machine shared)", flush=True)
    data = run(voices, not args.no_bare_ask)
    print_table(
        ["family", "n", *OUTCOMES],
        [[f, t.get("n", 0), *(t.get(o, 0) for o in OUTCOMES)] for f, t in data["table"].items()],
    )
    for row in data["every"]:
        if row[2] in ("device_at_once", "device_asked", "other_at_once"):
            print(f"  {row[0]}: {row[1]!r} -> {row[3]} ({row[5]!r}){' asked' if row[4] else ''}")
    print(write_results(args.name or "help_phrasings", data))


if __name__ == "__main__":
    main()
