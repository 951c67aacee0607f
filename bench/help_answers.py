"""Answers to the help question: how they are heard, per voice family and room.

Run on one core:  taskset -c 1 python bench/help_answers.py [--all-voices] [--rooms ROOM ...]

When a call for help is doubtful the satellite asks "Do you need help? Say help again if
you do" and hears the answer with the answers' grammar (nlu/help_answers.py). Each answer
below (tests/corpus.py voices: eSpeak NG, flite, Festival; clean, white 10 dB, babble
10 dB) is replayed without a wake word through the satellite as it hears an answer (the
question open, default configuration, no LLM), and what the dialogue makes of it is
counted (``answer_to_help``):

- right: a yes-family answer or help sends the call (``yes``), a no-family one drops it
  (``no``); ``unclear`` sends it marked unconfirmed (never lost, but not right);
- the dangerous confusions: yes or help heard as no (however doubtful: what a rule that
  took any "no" would drop) and dropped (a clear no: the call lost), and no heard as
  yes or help (the call sent, confirmed, although the person said no);
- outside the question (the commands' grammar, as any utterance is heard): how often a
  yes or no is an answer intent (never, by design), a call for help, and one sent at
  once (not asked about first).

``--set SECTION.KEY=VALUE``: another configuration (e.g. ``stt.loud_adaptation=false``),
``--name``: the results file's name. Writes bench/results/NAME.json (help_answers.json by
default) and prints the table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import peak_rss_mb, print_table, rooms_labelled, write_results
from bench.robustness import configured
from satellite.config import Config
from satellite.nlu.help_answers import ANSWER_NO, ANSWER_YES
from satellite.nlu.recognizer import IntentResult
from satellite.understanding import Understanding
from satellite.understanding.dialogue import answer_to_help
from tests import corpus, robustness

YES = ("yes", "yes please", "yeah", "please", "i do")
NO = ("no", "no thanks", "i'm fine", "i'm okay", "i'm all right", "never mind")
HELP = ("help", "i need help")
ROOMS = (corpus.Room("clean"), corpus.Room("white", 10.0), corpus.Room("babble", 10.0))
#: What each kind of answer should come to.
EXPECTED = {"yes": "yes", "help": "yes", "no": "no"}


def hear(
    understanding: Understanding,
    voice: corpus.Voice,
    text: str,
    room: corpus.Room,
    seed: int,
    question: bool,
    config: Config,
) -> tuple[str | None, bool]:
    """The intent the first utterance of ``text`` came to and whether it was doubtful."""
    scene = robustness.scene(voice, text, room, seed=seed, wake=False)
    understanding.question.open = question
    heard = robustness.replay(config, scene.audio, True, understanding)
    first = heard.first
    if first is None:
        return None, False
    return first.result.intent, first.doubtful


def run(
    voices: list[corpus.Voice], config: Config, rooms: tuple[corpus.Room, ...] = ROOMS
) -> dict[str, Any]:
    understanding = robustness.listener(config)
    answers = [(t, "yes") for t in YES] + [(t, "no") for t in NO] + [(t, "help") for t in HELP]
    table: dict[str, dict[str, Any]] = {}
    mistakes: list[dict[str, Any]] = []
    cpu_started = time.process_time()
    for room in rooms:
        for family in corpus.FAMILIES:
            tally: Counter[str] = Counter()
            for voice in [v for v in voices if v.family == family]:
                for index, (text, kind) in enumerate(answers):
                    intent, doubtful = hear(understanding, voice, text, room, index, True, config)
                    verdict = answer_to_help(IntentResult(intent), doubtful)
                    tally[f"{kind}_n"] += 1
                    tally[f"{kind}_{verdict}"] += 1
                    # heard as the other answer, however doubtful (before the rule)
                    tally[f"{kind}_heard_no"] += intent == ANSWER_NO
                    tally[f"{kind}_heard_yes"] += intent in (ANSWER_YES, "CallForHelp")
                    if verdict != EXPECTED[kind]:
                        mistakes.append(
                            {
                                "voice": voice.label,
                                "room": room.label,
                                "said": text,
                                "intent": intent,
                                "doubtful": doubtful,
                                "verdict": verdict,
                            }
                        )
                    if kind == "help":
                        continue
                    outside, doubted = hear(understanding, voice, text, room, index, False, config)
                    tally["outside_n"] += 1
                    tally["outside_answer"] += outside in (ANSWER_YES, ANSWER_NO)
                    tally["outside_acted"] += outside is not None
                    tally["outside_help"] += outside == "CallForHelp"
                    tally["outside_help_at_once"] += outside == "CallForHelp" and not doubted
            table[f"{family} / {room.label}"] = dict(tally)
            print(f"  {family} / {room.label}: {dict(tally)}", flush=True)
    understanding.question.open = False
    return {
        "voices": [v.label for v in voices],
        "rooms": [r.label for r in rooms],
        "answers": {"yes": YES, "no": NO, "help": HELP},
        "table": table,
        "mistakes": mistakes,
        "cpu_seconds": round(time.process_time() - cpu_started, 1),
        "peak_rss_mb": peak_rss_mb(),
    }


def _pct(counts: dict[str, int], parts: Sequence[str], wholes: Sequence[str]) -> str:
    part = sum(counts.get(k, 0) for k in parts)
    whole = sum(counts.get(k, 0) for k in wholes)
    return "-" if not whole else f"{100.0 * part / whole:.0f}% ({part}/{whole})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-voices", action="store_true", help="every corpus voice")
    parser.add_argument(
        "--set", nargs="*", default=[], metavar="SECTION.KEY=VALUE",
        help="configuration changed from the default (e.g. stt.loud_adaptation=false)",
    )  # fmt: skip
    parser.add_argument("--name", default="help_answers", help="results file name")
    parser.add_argument(
        "--rooms", nargs="*", metavar="ROOM", help="these rooms instead (e.g. 'people 20 dB')"
    )
    args = parser.parse_args()
    rooms = rooms_labelled(parser, args.rooms) if args.rooms else ROOMS
    voices = corpus.available(corpus.VOICES_ALL if args.all_voices else corpus.VOICES_CI)
    print(f"{len(voices)} voices x {len(rooms)} rooms (machine shared: timings noisy)", flush=True)
    data = run(voices, configured(args.set), rooms)
    data["settings"] = args.set
    asked = ("yes_n", "help_n")
    rows = [
        [
            key,
            _pct(t, ["yes_yes"], ["yes_n"]),
            _pct(t, ["help_yes"], ["help_n"]),
            _pct(t, ["no_no"], ["no_n"]),
            _pct(t, ["yes_heard_no", "help_heard_no"], asked),
            _pct(t, ["yes_no", "help_no"], asked),
            _pct(t, ["no_heard_yes"], ["no_n"]),
            _pct(t, ["yes_unclear", "help_unclear", "no_unclear"], [*asked, "no_n"]),
            _pct(t, ["outside_answer"], ["outside_n"]),
            _pct(t, ["outside_help"], ["outside_n"]),
            _pct(t, ["outside_help_at_once"], ["outside_n"]),
        ]
        for key, t in data["table"].items()
    ]
    print_table(
        [
            "family / room",
            "yes: sent",
            "help: sent",
            "no: dropped",
            "yes/help heard no",
            "yes/help dropped (!)",
            "no sent as yes (!)",
            "sent unconfirmed",
            "outside: answer",
            "outside: help",
            "outside: help at once",
        ],
        rows,
    )
    print(f"cpu {data['cpu_seconds']} s, peak RSS {data['peak_rss_mb']} MB (machine shared)")
    print(write_results(args.name, data))


if __name__ == "__main__":
    main()
