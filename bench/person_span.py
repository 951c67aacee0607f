"""The person's own words searched again alone in a loud room (``stt.person_span_retry``):
how often it runs, how often it is believed, what it costs.

Run on one core:  taskset -c 0 python bench/person_span.py [--step 6] [--rooms ...]

Each command of tests/data/commands.tsv (every ``--step``-th) is said after "okay nabu"
by the family's voices in turn (tests/corpus.py) and replayed through the satellite
(default configuration, no LLM). Per voice family and room: utterances decided, span
searches made, believed (then asked about: a loud room asks once more), believed as the
right command, and the search's CPU (the search of the words and the other way, ms per
search). What it changes in the outcome (right after asking, wrong, not understood) is
``bench/robustness.py`` with and without ``--set stt.person_span_retry=false``.

``--known-spans``: the measurement that led to it. Each command (no wake word) is heard
denoised, as a loud room is, and searched by the streaming search with the loud room's
model over a span of known bounds around the command: from 0.5 s before it to 0.7 s after
(what an utterance holds at best: its pre-roll and trailing silence), 0.25 / 0.3 s and
0.1 / 0.15 s. Per span: heard right, right and scored well enough for a loud room (no
agreement asked), wrong intent, wrong and scored well enough.

Writes bench/results/person_span[_known].json and prints the table.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench.common import machine, print_table, rooms_labelled, write_results
from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.frontend.noise import make_noise_suppressor
from satellite.nlu import trust
from satellite.stt.sphinx import PocketSphinxRecognizer
from tests import corpus, robustness
from tests.understand import commands

ROOMS = ("people 20 dB", "people 10 dB", "babble 10 dB", "white 10 dB")
#: ``--known-spans``: s before the command's start and after its end.
KNOWN_SPANS = {"0.5/0.7": (0.5, 0.7), "0.25/0.3": (0.25, 0.3), "0.1/0.15": (0.1, 0.15)}


def denoised_frames(audio: np.ndarray, config: Config) -> list[AudioChunk]:
    """``audio`` in 10 ms frames through the front end's noise suppressor."""
    noise = config.frontend.noise
    suppressor = make_noise_suppressor(noise.engine, noise.suppression_db, noise.webrtc_level)
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    return [
        suppressor.process(
            AudioChunk.from_int16(samples[at : at + 160], timestamp_seconds=at / 16000)
        )
        for at in range(0, len(samples) - 159, 160)
    ]


def known_spans(rooms: tuple[corpus.Room, ...], step: int) -> list[dict[str, Any]]:
    config = Config()
    understanding = robustness.listener(config)
    recognizer = understanding.recognizer
    assert isinstance(recognizer, PocketSphinxRecognizer)
    voices = corpus.available(corpus.VOICES_ALL)
    out = []
    for room in rooms:
        for family in corpus.FAMILIES:
            tally: collections.Counter[str] = collections.Counter()
            rows = commands()[::step]
            for index, voice, (text, intent, slots) in corpus.in_turn(voices, family, rows):
                scene = robustness.scene(voice, text, room, index, wake=False)
                frames = denoised_frames(scene.audio, config)
                for name, (before, after) in KNOWN_SPANS.items():
                    first = max(0, int((scene.command_start / 16000 - before) * 100))
                    last = min(len(frames), int((scene.command_end / 16000 + after) * 100))
                    recognizer.reset()
                    recognizer.hear_room(True)
                    recognizer.start(first / 100)
                    for frame in frames[first:last]:
                        recognizer.process(frame)
                    got = recognizer.finish()
                    result = understanding.templates.recognize(got.text) if got.in_grammar else None
                    if result is None or result.intent is None:
                        continue
                    what = robustness.outcome(result, intent, slots)
                    what = "right" if what == robustness.RIGHT else "wrong"
                    tally[f"{name} {what}"] += 1
                    if trust.scored_enough(got, result, True, understanding.settings):
                        tally[f"{name} {what}, scored"] += 1
            out.append({"room": room.label, "family": family, "n": len(rows), **tally})
            print(out[-1], flush=True)
    return out


def measure(rooms: tuple[corpus.Room, ...], step: int) -> list[dict[str, Any]]:
    config = Config()
    understanding = robustness.listener(config)
    voices = corpus.available(corpus.VOICES_ALL)
    rows = commands()[::step]
    out = []
    for room in rooms:
        for family in corpus.FAMILIES:
            tally = {"scenes": 0, "decided": 0, "searched": 0, "believed": 0, "right": 0}
            costs: list[float] = []
            for index, voice, (text, intent, slots) in corpus.in_turn(voices, family, rows):
                scene = robustness.scene(voice, text, room, index)
                understanding.reports.clear()
                heard = robustness.replay(config, scene.audio, False, understanding)
                tally["scenes"] += 1
                for report in understanding.reports.values():
                    tally["decided"] += 1
                    if report.person_span is None:
                        continue
                    tally["searched"] += 1
                    timings = report.timings_ms
                    costs.append(
                        timings.get("person_span_search", 0.0)
                        + timings.get("person_span_other_way", 0.0)
                    )
                    if report.stt is not None and report.stt.text == report.person_span.text:
                        tally["believed"] += int(report.stt.in_grammar)
                first = heard.first
                outcome = robustness.outcome(first.result if first else None, intent, slots)
                tally["right"] += outcome == robustness.RIGHT
            out.append(
                {
                    "room": room.label,
                    "family": family,
                    **tally,
                    "ms_median": round(statistics.median(costs), 1) if costs else None,
                    "ms_max": round(max(costs), 1) if costs else None,
                }
            )
            print(out[-1], flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=6, help="every STEP-th command")
    parser.add_argument("--rooms", nargs="*", default=list(ROOMS), metavar="ROOM")
    parser.add_argument("--known-spans", action="store_true", help="see above")
    args = parser.parse_args()
    rooms = rooms_labelled(parser, args.rooms)
    if args.known_spans:
        known = known_spans(rooms, args.step)
        columns = [
            f"{s} {w}"
            for s in KNOWN_SPANS
            for w in ("right", "right, scored", "wrong", "wrong, scored")
        ]
        print_table(
            ["room", "family", "n", *columns],
            [[r["room"], r["family"], r["n"], *(r.get(c, 0) for c in columns)] for r in known],
        )
        print(write_results("person_span_known", {"machine": machine(), "rows": known}))
        return 0
    rows = measure(rooms, args.step)
    print_table(
        ["room", "family", "scenes", "utterances", "searched", "believed", "first right",
         "ms median", "ms max"],
        [[r["room"], r["family"], r["scenes"], r["decided"], r["searched"], r["believed"],
          r["right"], r["ms_median"], r["ms_max"]] for r in rows],
    )  # fmt: skip
    print(write_results("person_span", {"machine": machine(), "step": args.step, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
