"""Two runs of bench/false_help.py compared utterance by utterance.

Run:  python bench/compare_false_help.py BEFORE AFTER [--name NAME]
(each a bench/results/<name>.json of false_help.py, or a path to one)

Prints every utterance whose outcome (outcome, intent, doubt) differs, how many were
decided sooner, later and at the same frame (and which moved), the median and 95th
percentile of when they were decided after the end of speech per kind, family and room,
before -> after, and the checks begun early of each run. Writes
bench/results/<NAME>.json (default ``false_help_compared``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import RESULTS, print_table, write_results


def load(name: str) -> dict[str, Any]:
    """A false_help.py result by name (bench/results/NAME.json) or path."""
    path = Path(name)
    if not path.exists():
        path = RESULTS / f"{name}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if "every" not in data:
        raise SystemExit(f"{path}: no 'every' (made before false_help.py kept each utterance)")
    return data


def _p(values: list[float], q: int) -> int | str:
    return round(float(np.percentile(values, q))) if values else "-"


def compare(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What changed between two runs, utterance by utterance."""
    kinds = {t: "non" for t in before["non_commands"]}
    kinds |= {t: "call" for t in before["calls"]}
    kinds |= {t: "short" for t, _ in before["short_commands"]}
    old = {(v, r, s): rest for v, r, s, *rest in before["every"]}
    new = {(v, r, s): rest for v, r, s, *rest in after["every"]}
    if old.keys() != new.keys():
        raise SystemExit("the two runs did not hear the same utterances")
    differ: list[dict[str, Any]] = []
    moved = {"sooner": 0, "later": 0, "same": 0}
    shifted: list[list[Any]] = []
    times: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for key, (outcome, intent, doubtful, was_ms) in old.items():
        outcome2, intent2, doubtful2, now_ms = new[key]
        voice, room, said = key
        if (outcome, intent, doubtful) != (outcome2, intent2, doubtful2):
            differ.append(
                {"voice": voice, "room": room, "said": said, "before": [outcome, intent, doubtful],
                 "after": [outcome2, intent2, doubtful2]}
            )  # fmt: skip
        if was_ms is None or now_ms is None:
            continue
        moved["same" if now_ms == was_ms else "sooner" if now_ms < was_ms else "later"] += 1
        if now_ms != was_ms:
            shifted.append([voice, room, said, was_ms, now_ms])
        family = voice.split("/")[0]
        pair = times[f"{kinds[said]} | {family} | {room}"]
        pair[0].append(was_ms)
        pair[1].append(now_ms)
    decided = {
        k: {"n": len(b), "p50": [_p(b, 50), _p(a, 50)], "p95": [_p(b, 95), _p(a, 95)]}
        for k, (b, a) in sorted(times.items())
    }
    return {
        "outcomes_differ": differ,
        "decided": moved,
        #: Utterances decided at another time: voice, room, said, before, after (ms).
        "decided_otherwise": shifted,
        "decided_after_end_of_speech_ms": decided,
        "early_check": [before.get("early_check"), after.get("early_check")],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--name", default="false_help_compared", help="bench/results/NAME.json")
    args = parser.parse_args()
    data = compare(load(args.before), load(args.after))
    print(f"outcomes that differ: {len(data['outcomes_differ'])}")
    for row in data["outcomes_differ"]:
        print(
            f"  {row['voice']} / {row['room']} {row['said']!r}: {row['before']} -> {row['after']}"
        )
    print(f"decided (both runs): {data['decided']}")
    for voice, room, said, was_ms, now_ms in data["decided_otherwise"]:
        print(f"  {voice} / {room} {said!r}: {was_ms} -> {now_ms} ms")
    print("decided after the end of speech, ms of audio, before -> after:")
    print_table(
        ["kind | family | room", "n", "p50", "p95"],
        [[k, v["n"], "{} -> {}".format(*v["p50"]), "{} -> {}".format(*v["p95"])]
         for k, v in data["decided_after_end_of_speech_ms"].items()],
    )  # fmt: skip
    print(f"checks begun early, before / after: {data['early_check']}")
    print(write_results(args.name, data))


if __name__ == "__main__":
    main()
