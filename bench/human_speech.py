"""Recorded people through the satellite: what it does with real human speech that is no
command, per source and room.

Run on one core:  taskset -c 1 python bench/human_speech.py [--rooms clean 'babble 10 dB']
[--name NAME]

The recordings are tests/human_speech.py's (a LibriVox reader, AN4 and TIDIGITS
speakers, a telephone conversation, alsa-utils' spoken prompts: 26 takes, 97 s, none of
it a command or the wake word). Each take, with room before and after it, is replayed
through the satellite (default configuration, no LLM, no question open) twice:

- listening on (no wake word needed, as in the follow-on window or while it answers):
  each utterance's answer counted as acted on at once or asked about first, by what it
  would do (switch a device, call for help, anything else), or not understood;
- with the wake word: false wakes (and anything acted on after one).

Writes bench/results/<NAME>.json (default ``human_speech``) and prints the table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import peak_rss_mb, print_table, rooms_labelled, write_results
from satellite.config import Config
from tests import corpus, human_speech, robustness
from tests.human_speech import ASKED, AT_ONCE, DEVICE, HELP, OTHER

ROOMS = ("clean", "reverb", "white 10 dB", "babble 10 dB", "tv 10 dB")
COLUMNS = [f"{how}_{kind}" for how in (AT_ONCE, ASKED) for kind in (DEVICE, HELP, OTHER)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rooms", nargs="*", default=ROOMS, metavar="ROOM", help=f"labels (default {ROOMS})"
    )
    parser.add_argument("--name", default="human_speech")
    args = parser.parse_args()
    rooms = list(rooms_labelled(parser, args.rooms))
    takes = human_speech.recordings()
    config = Config()
    listening = robustness.listener(config)
    waking = robustness.listener(config)
    table: dict[str, Counter[str]] = {}
    seconds: dict[str, float] = {}
    cases: list[dict[str, Any]] = []
    started = time.process_time()
    for in_room in rooms:
        for seed, take in enumerate(takes):
            key = f"{take.source} | {in_room.label}"
            counts = table.setdefault(key, Counter())
            seconds[key] = seconds.get(key, 0.0) + take.seconds
            on = human_speech.heard_in(take, in_room, seed, True, listening, config)
            woken = human_speech.heard_in(take, in_room, seed, False, waking, config)
            counts["wakes"] += len(woken.wakes)
            for mode, heard in (("listening", on), ("after_wake", woken)):
                for answer in heard.answers:
                    how, kind = human_speech.outcome(answer)
                    counts[f"{mode}_utterances"] += 1
                    counts[f"{mode}_{how}" if kind is None else f"{mode}_{how}_{kind}"] += 1
                    if kind is not None:
                        cases.append(_case(take, in_room, mode, answer, how, kind))
        print(f"  {in_room.label} done", file=sys.stderr, flush=True)
    total_seconds = sum(take.seconds for take in takes)
    write_results(
        args.name,
        {
            "recordings": [[t.source, t.name, round(t.seconds, 2), t.text] for t in takes],
            "seconds": round(total_seconds, 1),
            "rooms": [r.label for r in rooms],
            "table": {k: {"seconds": round(seconds[k], 1), **v} for k, v in table.items()},
            "acted_or_asked": cases,
            "cpu_seconds": round(time.process_time() - started, 1),
            "peak_rss_mb": peak_rss_mb(),
        },
    )
    _print(table, seconds, rooms)


def _case(
    take: Any, in_room: corpus.Room, mode: str, answer: Any, how: str, kind: str
) -> dict[str, Any]:
    return {
        "recording": take.name,
        "source": take.source,
        "room": in_room.label,
        "mode": mode,
        "heard": answer.result.text,
        "intent": answer.result.intent,
        "how": how,
        "kind": kind,
    }


def _print(
    table: dict[str, Counter[str]], seconds: dict[str, float], rooms: list[corpus.Room]
) -> None:
    """Per room (all sources) and per source (all rooms): listening on, then the wake."""
    by: dict[str, Counter[str]] = {}
    for key, counts in table.items():
        source, in_room = key.split(" | ")
        for group in (f"room {in_room}", f"source {source}"):
            by.setdefault(group, Counter()).update(counts)
            by[group]["seconds"] += round(seconds[key])
    headers = ["", "s heard", "utterances", *COLUMNS, "wakes", "after wake"]
    rows = []
    for group, counts in sorted(by.items(), key=lambda item: not item[0].startswith("room")):
        after = sum(counts[f"after_wake_{c}"] for c in COLUMNS)
        rows.append(
            [group, counts["seconds"], counts["listening_utterances"]]
            + [counts[f"listening_{c}"] for c in COLUMNS]
            + [counts["wakes"], after]
        )
    print(f"listening on (no wake word), {len(rooms)} rooms; wakes with the wake word:")
    print_table(headers, rows)


if __name__ == "__main__":
    main()
