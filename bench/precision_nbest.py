"""Precision: does the N-best margin of the grammar search tell wrong commands from right?

Run on one core:  taskset -c 1 python bench/precision_nbest.py [--step 2]

Each command of tests/data/commands.tsv (every ``--step``-th), in each voice family (its
voices in turn), in the clean and the reverberant room, is searched by the satellite's
streaming grammar search (after the wake word as its context, as after a wake). Its best
sentence is read by the templates; the margin is its lattice score against that of the
best sentence in the N-best list (40) that asks for something else (another intent or
slots), per 10 ms frame (no such sentence: the margin is taken as ``NO_RIVAL``).
A threshold is chosen on the even commands (the most wrong results caught for at most
as many right ones doubted as bench/precision.py's chosen rule doubts) and checked on
the odd ones; today's confidence (0.86) is shown beside it.

Writes bench/results/precision_nbest.json and prints the table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk, join_frames
from satellite.config import Config
from satellite.nlu.trust import same_request
from satellite.stt.sphinx import PocketSphinxRecognizer, nbest
from tests import corpus, robustness
from tests.understand import commands

#: The margin given when no sentence in the N-best list asks for something else.
NO_RIVAL = 99.0
THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)


def _frames(samples: np.ndarray[Any, Any], start_seconds: float) -> list[AudioChunk]:
    pcm = np.clip(np.round(samples), -32768, 32767).astype(np.int16)
    return [
        AudioChunk.from_int16(
            pcm[i : i + FRAME_SAMPLES], timestamp_seconds=start_seconds + i / 16000.0
        )
        for i in range(0, len(pcm) - FRAME_SAMPLES + 1, FRAME_SAMPLES)
    ]


def measure(rooms: Sequence[str], step: int) -> list[dict[str, Any]]:
    config = Config()
    understanding = robustness.listener(config)
    recognizer = understanding.recognizer
    assert isinstance(recognizer, PocketSphinxRecognizer)
    voices = corpus.available(corpus.VOICES_ALL)
    rows = commands()
    out = []
    for name in rooms:
        room = corpus.Room(name)
        for family in corpus.FAMILIES:
            members = [v for v in voices if v.family == family]
            for index in range(0, len(rows), step):
                text, intent, slots = rows[index]
                voice = members[(index // step) % len(members)]
                scene = robustness.scene(voice, text, room, index)
                lead = scene.command_start - 3200
                context = _frames(scene.audio[:lead], 0.0)
                frames = _frames(scene.audio[lead : scene.command_end + 8000], lead / 16000.0)

                recognizer.start(frames[0].timestamp_seconds, join_frames(context[-150:]))
                for frame in frames:
                    recognizer.process(frame)
                heard = recognizer.finish()
                best = understanding.templates.recognize(heard.text)
                ranked = nbest(recognizer)
                margin = NO_RIVAL
                if ranked:
                    for sentence, score in ranked:
                        other = understanding.templates.recognize(sentence)
                        if not same_request(other, best):
                            margin = round((ranked[0][1] - score) / len(frames), 4)
                            break
                got = robustness.outcome(best if heard.in_grammar else None, intent, slots)
                out.append(
                    {"room": name, "family": family, "order": index // step, "said": text,
                     "heard": heard.text, "outcome": got, "confidence": heard.confidence,
                     "margin": margin}
                )  # fmt: skip
        print(f"  {name} done", flush=True)
    return out


def summary(cases: Sequence[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Of the results understood: right and wrong ones, and how many of each the margin
    (below ``threshold``) and today's confidence (below 0.86) would doubt."""
    understood = [c for c in cases if c["outcome"] != robustness.NOT_UNDERSTOOD]
    right = [c for c in understood if c["outcome"] == robustness.RIGHT]
    wrong = [c for c in understood if c["outcome"] != robustness.RIGHT]
    return {
        "right": len(right),
        "wrong": len(wrong),
        "margin_doubts_right": sum(c["margin"] < threshold for c in right),
        "margin_doubts_wrong": sum(c["margin"] < threshold for c in wrong),
        "confidence_doubts_right": sum(c["confidence"] < 0.86 for c in right),
        "confidence_doubts_wrong": sum(c["confidence"] < 0.86 for c in wrong),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=2, help="every STEP-th command")
    args = parser.parse_args()
    cases = measure(("clean", "reverb"), args.step)
    even = [c for c in cases if c["order"] % 2 == 0]
    odd = [c for c in cases if c["order"] % 2 == 1]

    def caught(t: float) -> float:  # wrong ones doubted less right ones doubted (even)
        s = summary(even, t)
        return float(s["margin_doubts_wrong"] - s["margin_doubts_right"])

    threshold = max(THRESHOLDS, key=caught)
    table = {}
    rows = []
    for half, part in (("even", even), ("odd", odd)):
        for room in ("clean", "reverb"):
            s = summary([c for c in part if c["room"] == room], threshold)
            table[f"{half} | {room}"] = s
            rows.append([half, room, *s.values()])
    print(f"N-best margin threshold (chosen on the even half): {threshold}")
    print_table(
        ["half", "room", "right", "wrong", "margin: right doubted", "wrong doubted",
         "conf: right doubted", "wrong doubted"],
        rows,
    )  # fmt: skip
    print(write_results("precision_nbest", {"threshold": threshold, "table": table,
                                            "cases": cases}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
