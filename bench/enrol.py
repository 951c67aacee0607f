"""Enrolment: does adapting to a voice lift command accuracy, and what does it do to others?

Run on one core:  taskset -c 1 python bench/enrol.py [--step 2] [--room reverb]

For each voice: the satellite's first 20 prompts (satellite/data/enrol_prompts.txt, none of
them a test command) read in that voice in the room, enrolled as that voice's speaker
(sphinxtrain MLLR, timed: wall and CPU seconds, tools included); then the commands of
tests/data/commands.tsv (every ``--step``-th) after "okay nabu" in the same room,
replayed through the satellite exactly as bench/robustness.py does (default
configuration, no LLM), with no speaker selected and with the voice's own adaptation.
The last voice is also heard with the first voice's adaptation (another person in the
home while the resident's adaptation is loaded).

"right" is right at once; "right+asked" also counts a command the satellite asked to
hear again and then got right (reported apart, as in robustness.json).
Writes bench/results/enrol.json and prints the table.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, print_table, write_results
from satellite.config import Config
from satellite.enrol import enrol, recordings
from tests import corpus, robustness
from tests.enrol_support import record_prompts
from tests.understand import commands

VOICES = (
    corpus.Voice("espeak", "en-us", 160),
    corpus.Voice("festival", "kal_diphone", 1.0),
    corpus.Voice("flite", "slt", 1.0),
)
ENROL_SENTENCES = 20


def with_speaker(config: Config, speaker: str | None, speakers_dir: Path) -> Config:
    stt = dataclasses.replace(config.stt, speaker=speaker, speakers_dir=str(speakers_dir))
    return dataclasses.replace(config, stt=stt)


def accuracy(config: Config, voice: corpus.Voice, room: corpus.Room, step: int) -> dict[str, Any]:
    """Outcomes of the commands in ``voice`` and ``room`` heard with ``config``."""
    understanding = robustness.listener(config)
    tally = robustness.Tally()
    started = time.perf_counter()
    for index, (text, intent, slots) in enumerate(commands()[::step]):
        what, _ = robustness.judge(config, understanding, voice, text, room, intent, slots, index)
        tally.add(what)
    out = tally.to_dict()
    out["right_or_asked"] = round(out["right"] + out["right_after_asking"], 4)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def enrol_voice(voice: corpus.Voice, room: corpus.Room, work: Path) -> dict[str, Any]:
    name = f"{voice.family}-{voice.name}".replace("_", "-")
    folder = work / "recordings" / name
    record_prompts(voice, room, folder, ENROL_SENTENCES)
    done = enrol(name, recordings([folder]), work / "speakers")
    return {
        "speaker": name,
        "sentences": ENROL_SENTENCES,
        "speech_seconds": done.speech_seconds,
        "used": len(done.used),
        "not_aligned": len(done.ignored),
        "adapt_seconds": done.adapt_seconds,
        "adapt_cpu_seconds": done.adapt_cpu_seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=2, help="every STEP-th command")
    parser.add_argument("--room", default="reverb", help="clean, reverb, or KIND:SNR (white:20)")
    parser.add_argument("--voices", type=int, default=len(VOICES), help="the first N voices")
    args = parser.parse_args()
    kind, _, snr = args.room.partition(":")
    room = corpus.Room(kind, float(snr) if snr else None)
    voices = corpus.available(VOICES[: args.voices])
    base = Config()
    rows: list[dict[str, Any]] = []
    enrolments: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-enrol-") as tmp:
        work = Path(tmp)
        for voice in voices:
            enrolments[voice.label] = enrol_voice(voice, room, work)
            print(f"  enrolled {voice.label}: {enrolments[voice.label]}", flush=True)
        plan = [(v, None) for v in voices] + [(v, v) for v in voices]
        if len(voices) > 1:
            plan.append((voices[-1], voices[0]))
        for voice, adapted_to in plan:
            speaker = enrolments[adapted_to.label]["speaker"] if adapted_to else None
            config = with_speaker(base, speaker, work / "speakers")
            result = accuracy(config, voice, room, args.step)
            rows.append(
                {
                    "voice": voice.label,
                    "room": room.label,
                    "adaptation": speaker or "none",
                    **result,
                }
            )
            print(f"  {voice.label} with {speaker or 'none'}: {result}", flush=True)
    for row in rows:
        plain = next(r for r in rows if r["voice"] == row["voice"] and r["adaptation"] == "none")
        row["lift_points"] = round(100 * (row["right_or_asked"] - plain["right_or_asked"]), 1)
        row["lift_points_at_once"] = round(100 * (row["right"] - plain["right"]), 1)
    print_table(
        ["voice", "room", "adaptation", "n", "right %", "right+asked %", "lift pts",
         "wrong %", "not und. %", "no wake %"],
        [[r["voice"], r["room"], r["adaptation"], r["n"], f"{100 * r['right']:.0f}",
          f"{100 * r['right_or_asked']:.0f}", r["lift_points"], f"{100 * r['wrong_intent']:.0f}",
          f"{100 * r['not_understood']:.0f}", f"{100 * r['no_wake']:.0f}"] for r in rows],
    )  # fmt: skip
    print_table(
        ["voice", "speech s", "used", "adapt s (wall)", "adapt s (CPU)"],
        [[k, e["speech_seconds"], e["used"], e["adapt_seconds"], e["adapt_cpu_seconds"]]
         for k, e in enrolments.items()],
    )  # fmt: skip
    results = {
        "machine": machine(),
        "room": room.label,
        "command_step": args.step,
        "enrolments": enrolments,
        "rows": rows,
    }
    name = "enrol" + ("" if args.room == "reverb" else f"_{kind}")
    print(write_results(name + ("" if args.step == 2 else f"_step{args.step}"), results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
