"""False calls for help from short non-commands, and real calls for help, per voice
family and room.

Run on one core:  taskset -c 1 python bench/false_help.py [--all-voices] [--no-wake] [--name NAME]

A bare "yes", "no thanks" or "hello" said to the satellite after the wake word with no
help question open is heard with the commands' grammar, which has no such words: it
must not come out as a call for help (a false alarm to the caregivers). Each phrase of
``NON_COMMANDS`` and each real call for help (``CALLS``: every CallForHelp sentence of
tests/data/commands.tsv and more care sentences) is said after "okay nabu" by one voice
per family (``--all-voices``: every voice) in a clean room, white 10 dB and babble 10 dB,
replayed through the satellite (default configuration, no LLM, no question open), and
the first hearing is counted (``--no-wake``: said with no wake word, the satellite
listening on, as bench/help_answers.py hears them: in white and babble noise the wake
word of flite's and Festival's voices is mostly not heard):

- a non-command: a call for help sent at once (sure), asked about ("Do you need
  help?", doubtful), another intent (sure or asked about), not understood, no wake;
- a call for help: sent at once, asked about, lost (anything else), no wake.

Writes bench/results/<NAME>.json (default ``false_help``) and prints the table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import peak_rss_mb, print_table, write_results
from satellite.config import Config
from satellite.understanding import Understanding
from tests import corpus, robustness
from tests.understand import commands

HELP = "CallForHelp"
#: Short things people say that are no command (15).
NON_COMMANDS = (
    "yes",
    "no",
    "yeah",
    "okay",
    "thanks",
    "thank you",
    "no thanks",
    "i'm fine",
    "hello",
    "what",
    "sorry",
    "hmm",
    "oh",
    "all right",
    "nope",
)
#: Care sentences beyond commands.tsv's calls for help.
MORE_CALLS = (
    "help",
    "emergency",
    "call an ambulance",
    "fetch the nurse",
    "we need help",
    "send for the doctor",
    "i need some help",
    "get my carer",
)
ROOMS = (corpus.Room("clean"), corpus.Room("white", 10.0), corpus.Room("babble", 10.0))


def calls() -> list[str]:
    """Every real call for help heard: commands.tsv's and ``MORE_CALLS``."""
    return [text for text, intent, _ in commands() if intent == HELP] + list(MORE_CALLS)


def first_hearing(
    understanding: Understanding,
    voice: corpus.Voice,
    text: str,
    room: corpus.Room,
    seed: int,
    wake: bool = True,
) -> tuple[bool, str | None, bool]:
    """Whether the wake word was heard (with none said: True), and the intent and doubt
    of the first hearing."""
    scene = robustness.scene(voice, text, room, seed=seed, wake=wake)
    understanding.question.open = False
    heard = robustness.replay(Config(), scene.audio, not wake, understanding)
    woke = bool(heard.wakes) or not wake
    first = heard.first
    if first is None:
        return woke, None, False
    return woke, first.result.intent, first.doubtful


def non_command_outcome(woke: bool, intent: str | None, doubtful: bool) -> str:
    """What came of a non-command."""
    if not woke:
        return "no_wake"
    if intent == HELP:
        return "help_asked" if doubtful else "help_at_once"
    return "not_understood" if intent is None else "other_intent"


def call_outcome(woke: bool, intent: str | None, doubtful: bool) -> str:
    """What came of a real call for help."""
    if not woke:
        return "no_wake"
    if intent == HELP:
        return "asked" if doubtful else "sent"
    return "lost"


def run(
    voices: list[corpus.Voice], wake: bool = True, rooms: tuple[corpus.Room, ...] = ROOMS
) -> dict[str, Any]:
    understanding = robustness.listener(Config())
    said_calls = calls()
    table: dict[str, dict[str, Any]] = {}
    heard: list[dict[str, Any]] = []
    cpu_started = time.process_time()
    for room in rooms:
        for family in corpus.FAMILIES:
            tally: Counter[str] = Counter()
            for voice in [v for v in voices if v.family == family]:
                said = [(t, "non") for t in NON_COMMANDS] + [(t, "call") for t in said_calls]
                for index, (text, kind) in enumerate(said):
                    woke, intent, doubtful = first_hearing(
                        understanding, voice, text, room, index, wake
                    )
                    judge = non_command_outcome if kind == "non" else call_outcome
                    what = judge(woke, intent, doubtful)
                    tally[f"{kind}_n"] += 1
                    tally[f"{kind}_{what}"] += 1
                    if (kind, what) not in (("non", "not_understood"), ("call", "sent")):
                        heard.append(
                            {"voice": voice.label, "room": room.label, "said": text,
                             "intent": intent, "doubtful": doubtful, "outcome": what}
                        )  # fmt: skip
            table[f"{family} | {room.label}"] = dict(tally)
            print(f"  {family} / {room.label}: {dict(tally)}", flush=True)
    return {
        "voices": [v.label for v in voices],
        "wake_word": wake,
        "rooms": [r.label for r in rooms],
        "non_commands": NON_COMMANDS,
        "calls": said_calls,
        "table": table,
        "not_plain": heard,
        "cpu_seconds": round(time.process_time() - cpu_started, 1),
        "peak_rss_mb": peak_rss_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-voices", action="store_true", help="every corpus voice")
    parser.add_argument("--no-wake", action="store_true", help="said with no wake word")
    parser.add_argument(
        "--rooms", nargs="*", metavar="ROOM", help="these rooms instead (e.g. reverb 'white 10 dB')"
    )
    parser.add_argument("--name", default=None, help="bench/results/NAME.json")
    args = parser.parse_args()
    name = args.name or ("false_help_no_wake" if args.no_wake else "false_help")
    rooms: tuple[corpus.Room, ...] = ROOMS
    if args.rooms:
        rooms = tuple(r for r in corpus.ROOMS_ALL if r.label in args.rooms)
        if len(rooms) != len(args.rooms):
            parser.error(f"--rooms: use labels of {[r.label for r in corpus.ROOMS_ALL]}")
    voices = corpus.available(corpus.VOICES_ALL if args.all_voices else corpus.VOICES_CI)
    print(f"{len(voices)} voices x {len(rooms)} rooms (machine shared: timings noisy)", flush=True)
    data = run(voices, not args.no_wake, rooms)
    non = ("help_at_once", "help_asked", "other_intent", "not_understood", "no_wake")
    call = ("sent", "asked", "lost", "no_wake")
    rows = [
        [*key.split(" | "), t.get("non_n", 0)]
        + [t.get(f"non_{w}", 0) for w in non]
        + [t.get("call_n", 0)]
        + [t.get(f"call_{w}", 0) for w in call]
        for key, t in data["table"].items()
    ]
    print_table(
        ["family", "room", "non-commands", *non, "calls", *(f"call {w}" for w in call)], rows
    )
    print(f"cpu {data['cpu_seconds']} s, peak RSS {data['peak_rss_mb']} MB (machine shared)")
    print(write_results(name, data))


if __name__ == "__main__":
    main()
