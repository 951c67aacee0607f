"""Robustness: every voice family in every room, for understanding and the wake word.

Run on one core:  taskset -c 0 python bench/robustness.py [--step 3] [--full]

Scenes come from tests/corpus.py (eSpeak NG, flite and Festival voices; clean, reverb,
white, pink, babble and TV-like noise) and are replayed frame by frame through the
satellite as it hears them (default configuration, no LLM; ``--llm``: with it).

- Commands (tests/data/commands.tsv, every ``--step``-th) after "okay nabu": right at
  once, right after the satellite asked once more (the command said again, another take
  of the noise), wrong intent, not understood, false call for help, no wake.
- Out-of-domain sentences (tests/data/out_of_domain.txt) after "okay nabu": how often
  one switches a device or calls for help, at once or said again after the satellite
  asked once more (as a command is: the pessimist's person, who repeats it).
- ``--declines``: asked "Do you need help?" about anything but a call for help, the
  person says no ("no", "no thanks", "I'm fine") instead of repeating it. Each false
  call for help is then told apart by what came of the question: sent at once (none
  asked, or help heard in the answer), sent unconfirmed (the answer not made out), and
  the false calls the answer dropped.
- The wake word: detections of "okay nabu" per voice family and room for each thing
  it may hear (raw, speex at 30 and 12 dB, webrtc), at the model's own cutoff; false
  wakes per hour of reading without the wake word, from every voice.

Writes bench/results/robustness.json and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from bench.common import RESULTS, print_table, rooms_labelled, write_results
from satellite.config import Config, validate
from satellite.stt import factory
from tests import corpus, robustness
from tests.understand import commands, lines

#: Rooms of the default run (``--full``: every room of the corpus).
ROOMS = (
    corpus.Room("clean"),
    corpus.Room("reverb"),
    corpus.Room("white", 10.0),
    corpus.Room("pink", 10.0),
    corpus.Room("babble", 10.0),
    corpus.Room("tv", 10.0),
    corpus.Room("white", 20.0),
    corpus.Room("babble", 20.0),
)
WAKE_ROOMS = (corpus.Room("clean"), corpus.Room("reverb"), corpus.Room("babble", 10.0))


def _heard(answer: Any) -> dict[str, Any] | None:
    """What one hearing came to, for the cases list."""
    if answer is None:
        return None
    got = answer.result
    return {"text": got.text, "intent": got.intent, "slots": got.slots,
            "confidence": round(got.confidence, 3), "doubtful": answer.doubtful}  # fmt: skip


#: How a false call for help ended, by what the dialogue made of the help question's
#: answer (``Heard.help_answer``; None: no question asked).
HELP_ENDS = {None: "help_at_once", "yes": "help_at_once", "unclear": "help_unconfirmed",
             "silence": "help_unconfirmed", "no": "help_dropped"}  # fmt: skip


def help_end(what_came: str, heard: robustness.Heard) -> str | None:
    """How a scene that was no call for help ended on the help question (``HELP_ENDS``;
    None: it was never taken for one)."""
    if what_came == robustness.FALSE_HELP or heard.help_answer is not None:
        return HELP_ENDS[heard.help_answer]
    return None


def configured(settings: list[str]) -> Config:
    """The default configuration with ``SECTION.KEY=VALUE`` settings (YAML values)."""
    data: dict[str, Any] = {}
    for setting in settings:
        key, _, value = setting.partition("=")
        *sections, name = key.split(".")
        place = data
        for section in sections:
            place = place.setdefault(section, {})
        place[name] = yaml.safe_load(value)
    return validate(data, "--set")


def run_commands(
    rooms: tuple[corpus.Room, ...],
    step: int,
    wake: bool = True,
    config: Config | None = None,
    llm: bool = False,
    declines: bool = False,
) -> dict[str, Any]:
    config = config or Config()
    understanding = robustness.listener(config, llm)
    voices = corpus.available(corpus.VOICES_ALL)
    rows = commands()[::step]
    table: dict[str, dict[str, Any]] = {}
    help_ends: dict[str, dict[str, int]] = {}
    mistakes: list[dict[str, Any]] = []
    cases: list[dict[str, Any]] = []
    for room in rooms:
        started = time.perf_counter()
        for family in corpus.FAMILIES:
            tally = robustness.Tally()
            ends = dict.fromkeys(sorted(set(HELP_ENDS.values())), 0)
            for index, voice, (text, intent, slots) in corpus.in_turn(voices, family, rows):
                what, heard = robustness.judge(
                    config, understanding, voice, text, room, intent, slots, index, wake, declines
                )
                tally.add(what)
                end = help_end(what, heard) if intent != "CallForHelp" else None
                if end is not None:
                    ends[end] += 1
                cases.append(
                    {"room": room.label, "family": family, "voice": voice.label, "said": text,
                     "intent": intent, "outcome": what, "first": _heard(heard.first),
                     "again": [_heard(a) for a in heard.again], "help_answer": heard.help_answer}
                )  # fmt: skip
                if what in (robustness.WRONG, robustness.FALSE_HELP) and heard.first:
                    got = heard.first.result
                    mistakes.append(
                        {"room": room.label, "voice": voice.label, "said": text,
                         "heard": got.text, "intent": got.intent}
                    )  # fmt: skip
            table[f"{family} | {room.label}"] = tally.to_dict()
            help_ends[f"{family} | {room.label}"] = ends
        print(f"  commands in {room.label}: {time.perf_counter() - started:.0f} s", flush=True)
    return {"commands": len(rows), "table": table, "help_ends": help_ends,
            "mistakes": mistakes, "cases": cases}  # fmt: skip


def run_out_of_domain(
    rooms: tuple[corpus.Room, ...],
    step: int,
    config: Config | None = None,
    llm: bool = False,
    declines: bool = False,
) -> dict[str, Any]:
    config = config or Config()
    understanding = robustness.listener(config, llm)
    voices = corpus.available(corpus.VOICES_ALL)
    sentences = lines("out_of_domain.txt")[::step]
    table: dict[str, dict[str, Any]] = {}
    acted_cases: list[dict[str, Any]] = []
    for room in rooms:
        for family in corpus.FAMILIES:
            counts = dict.fromkeys(("n", "device_switched", "false_help", "asked_again"), 0)
            counts["acted_after_asking"] = 0
            counts |= dict.fromkeys(sorted(set(HELP_ENDS.values())), 0)
            for index, voice, text in corpus.in_turn(voices, family, sentences):
                # said again when asked about, as a command is (another take of the room)
                what, heard = robustness.judge(
                    config, understanding, voice, text, room, None, {}, index, True, declines
                )
                end = help_end(what, heard)
                if end is not None:
                    counts[end] += 1
                acted = robustness.acted_on(heard.first, *heard.again)
                counts["n"] += 1
                counts["device_switched"] += robustness.device_switched_by(acted)
                counts["false_help"] += acted is not None and acted.intent == "CallForHelp"
                counts["asked_again"] += bool(heard.first and heard.first.doubtful)
                counts["acted_after_asking"] += any(a and acted is a.result for a in heard.again)
                if acted is not None or heard.help_answer is not None:
                    acted_cases.append(
                        {"room": room.label, "voice": voice.label, "said": text,
                         "first": _heard(heard.first), "help_answer": heard.help_answer,
                         "again": [_heard(a) for a in heard.again]}
                    )  # fmt: skip
            table[f"{family} | {room.label}"] = counts
    return {"sentences": len(sentences), "table": table, "acted": acted_cases}


def run_wake(rooms: tuple[corpus.Room, ...], step: int, hours_per_voice: float) -> dict[str, Any]:
    voices = corpus.available(corpus.VOICES_ALL)
    rows = [text for text, _, _ in commands()][::step]
    table: dict[str, dict[str, Any]] = {}
    for room in rooms:
        for family in corpus.FAMILIES:
            woke: dict[str, int] = defaultdict(int)
            for index, voice, text in corpus.in_turn(voices, family, rows):
                audio = robustness.scene(voice, text, room, index).audio
                for hears in robustness.WAKE_INPUTS:
                    woke[hears] += bool(robustness.wake_hits(audio, hears))
            table[f"{family} | {room.label}"] = {
                "n": len(rows),
                **{h: round(c / len(rows), 4) for h, c in woke.items()},
            }
    false: dict[str, int] = defaultdict(int)
    for index, voice in enumerate(voices):
        audio = robustness.talk(voice, hours_per_voice * 3600.0, seed=index)
        for hears in robustness.WAKE_INPUTS:
            false[hears] += len(robustness.wake_hits(audio, hears))
    hours = hours_per_voice * len(voices)
    return {
        "table": table,
        "false_wakes": {
            "hours": round(hours, 3),
            "per_hour": {h: round(c / hours, 2) for h, c in false.items()},
            "count": dict(false),
        },
    }


def device_rows(results: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for key, row in results["table"].items():
        family, room = key.split(" | ")
        rows.append(
            [family, room, row["n"]]
            + [f"{100 * row[w]:.0f}" for w in robustness.OUTCOMES]
        )  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=3, help="every STEP-th command")
    parser.add_argument("--full", action="store_true", help="every room of the corpus")
    parser.add_argument("--wake-hours", type=float, default=0.02, help="reading per voice, h")
    parser.add_argument("--ood-step", type=int, default=1, help="every STEP-th OOD sentence")
    parser.add_argument(
        "--ood-rooms", nargs="*", default=["clean", "white 10 dB"], metavar="ROOM",
        help="the rooms out-of-domain sentences are said in",
    )  # fmt: skip
    parser.add_argument("--skip", nargs="*", default=[], choices=["commands", "ood", "wake"])
    parser.add_argument(
        "--rooms", nargs="*", metavar="ROOM", help="only these rooms' commands (e.g. clean reverb "
        "'white 10 dB'); their rows replace those of an earlier run, the others are kept",
    )  # fmt: skip
    parser.add_argument(
        "--no-wake", action="store_true", help="commands said with listening on (no wake word)"
    )
    parser.add_argument("--name", default="robustness", help="results file name")
    parser.add_argument(
        "--llm", action="store_true", help="with the LLM fallback, as the satellite runs by default"
    )
    parser.add_argument(
        "--declines", action="store_true",
        help='asked "Do you need help?" about anything else, the person says no',
    )  # fmt: skip
    parser.add_argument(
        "--set", nargs="*", default=[], metavar="SECTION.KEY=VALUE",
        help="configuration changed from the default (e.g. stt.loud_shift=4)",
    )  # fmt: skip
    parser.add_argument(
        "--loud-mllr", type=Path, metavar="FILE",
        help="the loud room's adaptation to hear with instead of the shipped one (one made "
        "by bench/loud_adaptation.py --name without a family, to measure that family held out)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.loud_mllr is not None:
        loud_mllr = args.loud_mllr.resolve(strict=True)
        factory.loud_mllr = lambda: loud_mllr  # type: ignore[attr-defined]
    rooms = corpus.ROOMS_ALL if args.full else ROOMS
    if args.rooms:
        rooms = rooms_labelled(parser, args.rooms)
    results: dict[str, Any] = {}
    if "wake" not in args.skip:
        results["wake"] = run_wake(WAKE_ROOMS, args.step, args.wake_hours)
        wake = results["wake"]
        print_table(
            ["family", "room", "n", *robustness.WAKE_INPUTS],
            [[*k.split(" | "), r["n"], *(f"{100 * r[h]:.0f}" for h in robustness.WAKE_INPUTS)]
             for k, r in wake["table"].items()],
        )  # fmt: skip
        print(f"false wakes per hour ({wake['false_wakes']['hours']} h):", wake["false_wakes"])
    if "commands" not in args.skip:
        results["commands"] = run_commands(
            rooms, args.step, not args.no_wake, configured(args.set), args.llm, args.declines
        )
        print_table(
            ["family", "room", "n", *(f"{w} %" for w in robustness.OUTCOMES)],
            device_rows(results["commands"]),
        )
        print_table(
            ["voices | room", *sorted(set(HELP_ENDS.values()))],
            [[k, *r.values()] for k, r in results["commands"]["help_ends"].items()],
        )
    if "ood" not in args.skip:
        results["out_of_domain"] = run_out_of_domain(
            rooms_labelled(parser, args.ood_rooms),
            args.ood_step,
            configured(args.set),
            args.llm,
            args.declines,
        )
        print_table(
            ["voices | room", "n", "device switched", "false help", "asked again",
             "acted after", *sorted(set(HELP_ENDS.values()))],
            [[k, *r.values()] for k, r in results["out_of_domain"]["table"].items()],
        )  # fmt: skip
    # the parts run now replace those of an earlier run; the others are kept
    earlier = RESULTS / f"{args.name}.json"
    merged: dict[str, Any] = json.loads(earlier.read_text()) if earlier.exists() else {}
    merged.pop("machine", None)
    if args.rooms and "commands" in results and "commands" in merged:
        kept = merged["commands"]
        kept["table"].update(results["commands"]["table"])
        kept["mistakes"] = [m for m in kept["mistakes"] if m["room"] not in args.rooms]
        kept["mistakes"] += results["commands"]["mistakes"]
        kept["cases"] = [c for c in kept.get("cases", []) if c["room"] not in args.rooms]
        kept["cases"] += results["commands"]["cases"]
        results["commands"] = kept
    merged.update(results)
    merged.update(
        voices=[v.label for v in corpus.available(corpus.VOICES_ALL)],
        command_step=args.step,
        wake_word=not args.no_wake,
        settings=args.set,
        llm=args.llm,
        declines=args.declines,
        loud_mllr=str(args.loud_mllr) if args.loud_mllr else None,
    )
    print(write_results(args.name, merged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
