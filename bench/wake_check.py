"""The wake word's cutoff, and whether a second check of each detection would pay.

Run on one core:  taskset -c 1 python bench/wake_check.py [--step 4] [--hours 0.1]

For "okay nabu, <command>" scenes (tests/corpus.py voices, every ``--step``-th command,
per voice family and room) heard as the default configuration hears them (webrtc level
2), and for reading with no wake word in it (``--hours`` per voice, every voice):

- recall at several cutoffs of the model's probability (a detection is the first frame
  over the cutoff, then 2 s of quiet), and false wakes per hour at those cutoffs;
- a second stage: PocketSphinx's keyphrase search for "okay nabu" over the 2 s of audio
  up to the detection, at several thresholds: the share of the scenes' detections it
  confirms, and of the false wakes it lets through.

Writes bench/results/wake_check.json and prints the tables.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from satellite.frontend.base import WakeHit
from satellite.stt.lexicon import pocketsphinx_model_dir
from tests import corpus, robustness, synth
from tests.understand import commands

CUTOFFS = (0.85, 0.5, 0.3)
#: Keyphrase thresholds of the second stage (lower: more lenient).
THRESHOLDS = (1e-80, 1e-40, 1e-20)
#: How the second stage says the wake word (nabu is not in CMUdict).
PRONUNCIATIONS = "okay OW K EY\nnabu N AA B UW\nnabu(2) N AE B UW\n"
#: Audio the second stage hears, ending at the detection, s.
WINDOW_SECONDS = 2.0
ROOMS = (
    corpus.Room("clean"),
    corpus.Room("reverb"),
    corpus.Room("white", 10.0),
    corpus.Room("babble", 10.0),
)


class SecondStage:
    """PocketSphinx keyphrase searches for the wake phrase, one per threshold."""

    def __init__(self, folder: Path) -> None:
        from pocketsphinx import Config, Decoder  # noqa: PLC0415

        (folder / "wake.dict").write_text(PRONUNCIATIONS, encoding="utf-8")
        model = pocketsphinx_model_dir("en") / "en-us"
        self.decoders: list[Any] = []
        for threshold in THRESHOLDS:
            phrases = folder / f"{threshold:g}.kws"
            phrases.write_text(f"okay nabu /{threshold:g}/\n", encoding="utf-8")
            self.decoders.append(
                Decoder(
                    Config(
                        hmm=os.fspath(model),
                        dict=os.fspath(folder / "wake.dict"),
                        kws=os.fspath(phrases),
                        lm=None,
                        loglevel="FATAL",
                    )
                )
            )

    def confirms(self, audio: synth.Float, at_seconds: float) -> list[bool]:
        """Per threshold: whether the phrase is found in the window ending at ``at_seconds``."""
        end = round(at_seconds * synth.RATE)
        window = audio[max(0, end - round(WINDOW_SECONDS * synth.RATE)) : end]
        pcm = np.clip(np.round(window), -32768, 32767).astype("<i2").tobytes()
        found = []
        for decoder in self.decoders:
            decoder.start_utt()
            decoder.process_raw(pcm, False, True)
            decoder.end_utt()
            found.append(decoder.hyp() is not None)
        return found


def detections(frames: list[WakeHit], cutoff: float) -> list[tuple[float, float]]:
    """(time, peak probability within 1 s) of each detection at ``cutoff``: the first
    frame over it, then 2 s of quiet, as the detector does."""
    found: list[tuple[float, float]] = []
    quiet_until = float("-inf")
    for hit in frames:
        if hit.probability > cutoff and hit.timestamp_seconds >= quiet_until:
            peak = max(
                h.probability
                for h in frames
                if hit.timestamp_seconds <= h.timestamp_seconds < hit.timestamp_seconds + 1.0
            )
            found.append((hit.timestamp_seconds, peak))
            quiet_until = hit.timestamp_seconds + 2.0
    return found


def run_scenes(stage: SecondStage, step: int) -> dict[str, Any]:
    voices = corpus.available(corpus.VOICES_ALL)
    rows = [text for text, _, _ in commands()][::step]
    table: dict[str, Any] = {}
    for room in ROOMS:
        for family in corpus.FAMILIES:
            woke = dict.fromkeys(CUTOFFS, 0)
            confirmed = {c: [0] * len(THRESHOLDS) for c in CUTOFFS}
            for index, voice, text in corpus.in_turn(voices, family, rows):
                audio = robustness.scene(voice, text, room, index).audio
                frames = robustness.wake_hits(audio, "webrtc2", cutoff=0.2, refractory_seconds=0)
                for cutoff in CUTOFFS:
                    found = detections(frames, cutoff)
                    if found:
                        woke[cutoff] += 1
                        for i, yes in enumerate(stage.confirms(audio, found[0][0])):
                            confirmed[cutoff][i] += yes
            table[f"{family} | {room.label}"] = {
                "n": len(rows),
                "woken": {str(c): round(w / len(rows), 3) for c, w in woke.items()},
                "confirmed": {
                    str(c): [round(k / len(rows), 3) for k in counts]
                    for c, counts in confirmed.items()
                },
            }
            print(family, room.label, table[f"{family} | {room.label}"], file=sys.stderr)
    return table


def run_false(stage: SecondStage, hours_per_voice: float) -> dict[str, Any]:
    voices = corpus.available(corpus.VOICES_ALL)
    found: list[tuple[float, list[bool]]] = []
    for index, voice in enumerate(voices):
        audio = robustness.talk(voice, hours_per_voice * 3600.0, seed=index)
        frames = robustness.wake_hits(audio, "webrtc2", cutoff=0.05, refractory_seconds=0)
        found += [(peak, stage.confirms(audio, at)) for at, peak in detections(frames, 0.05)]
    hours = hours_per_voice * len(voices)
    per_hour = {}
    for cutoff in (*CUTOFFS, 0.15, 0.05):
        over = [f for f in found if f[0] > cutoff]
        per_hour[str(cutoff)] = {
            "alone": round(len(over) / hours, 2),
            "confirmed": [round(sum(f[1][i] for f in over) / hours, 2) for i in range(3)],
        }
    return {"hours": round(hours, 3), "per_hour": per_hour}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=4, help="every STEP-th command")
    parser.add_argument("--hours", type=float, default=0.1, help="reading per voice, h")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wake-check-") as tmp:
        stage = SecondStage(Path(tmp))
        scenes = run_scenes(stage, args.step)
        false = run_false(stage, args.hours)
    write_results(
        "wake_check",
        {"thresholds": THRESHOLDS, "cutoffs": CUTOFFS, "scenes": scenes, "false_wakes": false},
    )
    headers = ["family | room", "n"]
    headers += [f"woken {c}" for c in CUTOFFS]
    headers += [f"confirmed {c} @{t:g}" for c in CUTOFFS[:2] for t in THRESHOLDS]
    rows = []
    for name, cell in scenes.items():
        row: list[Any] = [name, cell["n"]]
        row += [round(100 * cell["woken"][str(c)]) for c in CUTOFFS]
        row += [round(100 * k) for c in CUTOFFS[:2] for k in cell["confirmed"][str(c)]]
        rows.append(row)
    print_table(headers, rows)
    print(f"\nfalse wakes per hour ({false['hours']} h of reading):")
    print_table(
        ["cutoff", "alone", *(f"confirmed @{t:g}" for t in THRESHOLDS)],
        [[c, f["alone"], *f["confirmed"]] for c, f in false["per_hour"].items()],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
