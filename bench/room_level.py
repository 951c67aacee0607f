"""Where a command ends in a room of other voices, with speech judged against the room's
level (``frontend.recorder.against_room_level``) and without it.

Run on one core:  taskset -c 0 python bench/room_level.py [--off] [--step 8] [--rooms ...]

Each command of tests/data/commands.tsv (every ``--step``-th) is said after "okay nabu" by
the family's voices in turn (tests/corpus.py), in babble or TV-like noise, with 4 s of the
room after it, and replayed through the satellite (default configuration, no LLM). Per
voice family and room, over the scenes whose wake word was heard: utterances heard (more
than one a scene: the room's voices opened another), the first utterance's end within
0.25 s of the command's, ran on (not ended within 4 s of the command), the time from the
command's end to the utterance's, and what the first hearing came to (right, wrong
intent, not understood; before any asking again).

Writes bench/results/room_level[_off].json and prints the table.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from satellite.actions import AnswerDue
from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk
from satellite.config import Config
from satellite.events import Event, UtteranceEnded, WakeDetected
from satellite.pipeline import build_pipeline
from satellite.understanding import Understanding
from tests import corpus, robustness, synth
from tests.understand import commands

#: The room after the command, s (an utterance not ended by then ran on).
AFTER_SECONDS = 4.0
#: The first utterance's end this close to the command's counts as right, s.
END_WITHIN_SECONDS = 0.25
ROOMS = ("babble 20", "babble 10", "tv 20", "tv 10")


def _config(against_room: bool) -> Config:
    config = Config()
    recorder = dataclasses.replace(config.frontend.recorder, against_room_level=against_room)
    return dataclasses.replace(
        config, frontend=dataclasses.replace(config.frontend, recorder=recorder)
    )


def _replay(
    config: Config, understanding: Understanding, audio: Any
) -> tuple[list[Event], list[AnswerDue]]:
    understanding.reset()
    pipeline = build_pipeline(config, continuous=False, understanding=understanding)
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    events: list[Event] = []
    answers: list[AnswerDue] = []
    for offset in range(0, len(samples) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        chunk = AudioChunk.from_int16(
            samples[offset : offset + FRAME_SAMPLES], timestamp_seconds=offset / 16000
        )
        events += pipeline.process(chunk)
        answers += [a for a in pipeline.take_actions() if isinstance(a, AnswerDue)]
    events += pipeline.end_of_input()
    answers += [a for a in pipeline.take_actions() if isinstance(a, AnswerDue)]
    return events, answers


def run(rooms: list[corpus.Room], step: int, against_room: bool) -> dict[str, Any]:
    robustness.TAIL_SECONDS = AFTER_SECONDS
    config = _config(against_room)
    understanding = robustness.listener(config)
    rows = commands()[::step]
    voices = corpus.available(corpus.VOICES_ALL)
    table: dict[str, Any] = {}
    for room in rooms:
        for family in corpus.FAMILIES:
            tally: Counter[str] = Counter()
            lags: list[float] = []
            for index, voice, (text, intent, slots) in corpus.in_turn(voices, family, rows):
                scene = robustness.scene(voice, text, room, index)
                events, answers = _replay(config, understanding, scene.audio)
                if not any(isinstance(e, WakeDetected) for e in events):
                    tally["no_wake"] += 1
                    continue
                tally["woken"] += 1
                ended = [e for e in events if isinstance(e, UtteranceEnded)]
                tally["utterances"] += len(ended)
                command_end = scene.command_end / synth.RATE
                if not ended or ended[0].reason == "end_of_input":
                    tally["ran_on"] += 1
                    continue
                lags.append(ended[0].timestamp_seconds - command_end)
                tally["end_right"] += abs(ended[0].end_seconds - command_end) <= END_WITHIN_SECONDS
                first = answers[0].result if answers else None
                tally[robustness.outcome(first, intent, slots)] += 1
            table[f"{family} | {room.label}"] = {
                **tally,
                "lag_p50_s": round(float(np.median(lags)), 2) if lags else None,
                "lag_max_s": round(max(lags), 2) if lags else None,
            }
            print(f"  {family} | {room.label}: {table[f'{family} | {room.label}']}", flush=True)
    return {"against_room_level": against_room, "step": step, "table": table}


def _room(label: str) -> corpus.Room:
    kind, _, snr = label.partition(" ")
    return corpus.Room(kind, float(snr)) if snr else corpus.Room(kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--off", action="store_true", help="against_room_level off (before)")
    parser.add_argument("--step", type=int, default=8, help="every STEP-th command")
    parser.add_argument("--rooms", nargs="*", default=list(ROOMS), help="e.g. 'babble 10'")
    args = parser.parse_args()
    data = run([_room(r) for r in args.rooms], args.step, not args.off)
    path = write_results("room_level_off" if args.off else "room_level", data)
    headers = ["family | room", "woken", "utterances", "end right", "ran on", "lag p50 s"]
    headers += ["lag max s", "right", "wrong", "not understood"]
    print_table(
        headers,
        [
            [
                key, row.get("woken", 0), row.get("utterances", 0), row.get("end_right", 0),
                row.get("ran_on", 0), row["lag_p50_s"], row["lag_max_s"],
                row.get(robustness.RIGHT, 0), row.get(robustness.WRONG, 0),
                row.get(robustness.NOT_UNDERSTOOD, 0),
            ]
            for key, row in data["table"].items()
        ],
    )  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
