"""Short non-commands heard as commands (a false call for help, another intent), real
calls for help and short real commands, per voice family and room.

Run on one core:  taskset -c 1 python bench/false_help.py [--all-voices] [--no-wake]
[--families festival ...] [--no-early] [--no-bare-ask] [--name NAME]

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
  help?", doubtful), another intent acted on at once (sure) or asked about, not
  understood, no wake;
- a call for help: sent at once, asked about, lost (anything else), no wake;
- a short real command (``short_commands``: commands.tsv's of at most four words, not
  calls for help): right at once, right but asked about, wrong intent, not understood,
  no wake.

And when each was decided: the first answer's frame less the end of the speech, ms of
audio (replayed offline, not paced: the CPU a search costs is not in it; the median and
the 95th percentile per kind).

Writes bench/results/<NAME>.json (default ``false_help``) and prints the table.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import peak_rss_mb, print_table, rooms_labelled, write_results
from bench.robustness import configured
from satellite.actions import AnswerDue
from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk
from satellite.config import Config
from satellite.events import WakeDetected
from satellite.pipeline import build_pipeline
from satellite.stt.steps import timed
from satellite.understanding import Understanding
from tests import corpus, robustness, synth
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
#: What is said: non-commands, calls for help, short real commands.
KINDS = ("non", "call", "short")


def calls() -> list[str]:
    """Every real call for help heard: commands.tsv's and ``MORE_CALLS``."""
    return [text for text, intent, _ in commands() if intent == HELP] + list(MORE_CALLS)


def short_commands() -> list[tuple[str, str]]:
    """commands.tsv's commands of at most four words (calls for help left out), with
    the intent each is."""
    return [(t, i) for t, i, _ in commands() if i != HELP and len(t.split()) <= 4]


def first_hearing(
    understanding: Understanding,
    voice: corpus.Voice,
    text: str,
    room: corpus.Room,
    seed: int,
    wake: bool = True,
    config: Config | None = None,
) -> tuple[bool, str | None, bool, float | None]:
    """Whether the wake word was heard (with none said: True), the intent and doubt of
    the first hearing, and when it was decided after the end of the speech (ms of audio;
    None: nothing was)."""
    scene = robustness.scene(voice, text, room, seed=seed, wake=wake)
    understanding.question.open = False
    understanding.reset()
    pipeline = build_pipeline(config or Config(), continuous=not wake, understanding=understanding)
    samples = np.clip(np.round(scene.audio), -32768, 32767).astype(np.int16)
    woke = not wake
    first: AnswerDue | None = None
    decided = float(len(samples))
    for offset in range(0, len(samples) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        chunk = AudioChunk.from_int16(
            samples[offset : offset + FRAME_SAMPLES], timestamp_seconds=offset / synth.RATE
        )
        woke |= any(isinstance(e, WakeDetected) for e in pipeline.process(chunk))
        due = [a for a in pipeline.take_actions() if isinstance(a, AnswerDue)]
        if due and first is None:
            first, decided = due[0], float(offset + FRAME_SAMPLES)
    pipeline.end_of_input()
    if first is None:
        first = next((a for a in pipeline.take_actions() if isinstance(a, AnswerDue)), None)
    if first is None:
        return woke, None, False, None
    after_ms = round(1000.0 * (decided - scene.command_end) / synth.RATE)
    return woke, first.result.intent, first.doubtful, after_ms


def meter_checks(understanding: Understanding) -> list[float]:
    """The CPU each check's search costs from now on, ms, one entry per search (a search
    from its own mean made while the recognizer searches a check's grammar, the help
    confirmation's included)."""
    hearing = understanding.hearing
    searches = getattr(understanding.recognizer, "answer_searches", None)
    inner = hearing.search_own_mean_steps
    spent: list[float] = []

    def metered(*args: Any, **kwargs: Any) -> Generator[None, None, Any]:
        checking = searches is not None and bool(searches.checking)
        value, cpu_ms = yield from timed(inner(*args, **kwargs), clock=time.process_time)
        if checking:
            spent.append(cpu_ms)
        return value

    setattr(hearing, "search_own_mean_steps", metered)  # noqa: B010  (an instance's method)
    return spent


def non_command_outcome(woke: bool, intent: str | None, doubtful: bool) -> str:
    """What came of a non-command."""
    if not woke:
        return "no_wake"
    if intent == HELP:
        return "help_asked" if doubtful else "help_at_once"
    if intent is None:
        return "not_understood"
    return "other_asked" if doubtful else "other_at_once"


def call_outcome(woke: bool, intent: str | None, doubtful: bool) -> str:
    """What came of a real call for help."""
    if not woke:
        return "no_wake"
    if intent == HELP:
        return "asked" if doubtful else "sent"
    return "lost"


def short_outcome(woke: bool, intent: str | None, doubtful: bool, expected: str) -> str:
    """What came of a short real command."""
    if not woke:
        return "no_wake"
    if intent is None:
        return "not_understood"
    if intent != expected:
        return "wrong"
    return "asked" if doubtful else "right"


def percentiles(values: list[float]) -> dict[str, float | int]:
    """n, median and 95th percentile of ``values`` (ms)."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(float(np.percentile(values, 50))),
        "p95": round(float(np.percentile(values, 95))),
    }


def run(
    voices: list[corpus.Voice],
    wake: bool = True,
    rooms: tuple[corpus.Room, ...] = ROOMS,
    kinds: tuple[str, ...] = KINDS,
    early: bool = True,
    non_commands: tuple[str, ...] = NON_COMMANDS,
    bare_ask: bool = True,
    config: Config | None = None,
) -> dict[str, Any]:
    base = config or Config()
    stt = dataclasses.replace(
        base.stt, ask_about_bare_names=bare_ask and base.stt.ask_about_bare_names
    )
    heard_with = dataclasses.replace(base, stt=stt)
    understanding = robustness.listener(heard_with)
    understanding.early.enabled = early
    checks_cpu = meter_checks(understanding)
    said_calls = calls()
    shorts = short_commands()
    table: dict[str, dict[str, Any]] = {}
    heard: list[dict[str, Any]] = []
    every: list[list[Any]] = []
    decided: dict[str, list[float]] = defaultdict(list)
    check_ms: dict[str, list[float]] = defaultdict(list)
    cpu_started = time.process_time()
    for room in rooms:
        for family in corpus.FAMILIES:
            tally: Counter[str] = Counter()
            for voice in [v for v in voices if v.family == family]:
                said = [(t, "non", "") for t in non_commands]
                said += [(t, "call", HELP) for t in said_calls]
                said += [(t, "short", i) for t, i in shorts]
                for index, (text, kind, expected) in enumerate(said):
                    if kind not in kinds:
                        continue
                    checked = len(checks_cpu)
                    woke, intent, doubtful, after_ms = first_hearing(
                        understanding, voice, text, room, index, wake, heard_with
                    )
                    if kind == "non":
                        what = non_command_outcome(woke, intent, doubtful)
                    elif kind == "call":
                        what = call_outcome(woke, intent, doubtful)
                    else:
                        what = short_outcome(woke, intent, doubtful, expected)
                    tally[f"{kind}_n"] += 1
                    tally[f"{kind}_{what}"] += 1
                    if after_ms is not None and woke:
                        decided[f"{kind} | {family} | {room.label}"].append(after_ms)
                    check_ms[f"{kind} | {family} | {room.label}"] += checks_cpu[checked:]
                    every.append([voice.label, room.label, text, what, intent, doubtful, after_ms])
                    if what not in ("not_understood", "sent", "right"):
                        heard.append(
                            {"voice": voice.label, "room": room.label, "said": text,
                             "intent": intent, "doubtful": doubtful, "outcome": what,
                             "decided_after_ms": after_ms}
                        )  # fmt: skip
            table[f"{family} | {room.label}"] = dict(tally)
            print(f"  {family} / {room.label}: {dict(tally)}", flush=True)
    return {
        "voices": [v.label for v in voices],
        "wake_word": wake,
        "ask_about_bare_names": bare_ask,
        "rooms": [r.label for r in rooms],
        "non_commands": non_commands,
        "calls": said_calls,
        "short_commands": shorts,
        "table": table,
        "decided_after_end_of_speech_ms": {k: percentiles(v) for k, v in decided.items()},
        "check_cpu_ms": {k: percentiles(v) for k, v in check_ms.items()},
        "not_plain": heard,
        #: Every utterance: voice, room, said, outcome, intent, doubtful, decided after (ms).
        "every": every,
        "early_check": dataclasses.asdict(understanding.early.tally),
        "cpu_seconds": round(time.process_time() - cpu_started, 1),
        "peak_rss_mb": peak_rss_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-voices", action="store_true", help="every corpus voice")
    parser.add_argument(
        "--families", nargs="*", choices=corpus.FAMILIES, help="only these voice families"
    )
    parser.add_argument("--no-wake", action="store_true", help="said with no wake word")
    parser.add_argument(
        "--rooms", nargs="*", metavar="ROOM", help="these rooms instead (e.g. reverb 'white 10 dB')"
    )
    parser.add_argument(
        "--kinds", nargs="*", choices=KINDS, default=list(KINDS), help="only these (seeds kept)"
    )
    parser.add_argument(
        "--no-early", action="store_true", help="no checks begun in the trailing silence"
    )
    parser.add_argument(
        "--non-commands",
        nargs="+",
        metavar="PHRASE",
        help="these non-commands instead of the 15 (the calls' and commands' seeds then move)",
    )
    parser.add_argument(
        "--no-bare-ask",
        action="store_true",
        help="stt.ask_about_bare_names off (a bare name's device action at once, as before)",
    )
    parser.add_argument(
        "--set", nargs="*", default=[], metavar="SECTION.KEY=VALUE",
        help="configuration changed from the default (e.g. stt.confirm_help_among_voices=false)",
    )  # fmt: skip
    parser.add_argument("--name", default=None, help="bench/results/NAME.json")
    args = parser.parse_args()
    name = args.name or ("false_help_no_wake" if args.no_wake else "false_help")
    rooms: tuple[corpus.Room, ...] = ROOMS
    if args.rooms:
        rooms = rooms_labelled(parser, args.rooms)
    voices = corpus.available(corpus.VOICES_ALL if args.all_voices else corpus.VOICES_CI)
    if args.families:
        voices = [v for v in voices if v.family in args.families]
    print(f"{len(voices)} voices x {len(rooms)} rooms (machine shared: timings noisy)", flush=True)
    non_commands = tuple(args.non_commands) if args.non_commands else NON_COMMANDS
    data = run(
        voices,
        not args.no_wake,
        rooms,
        tuple(args.kinds),
        not args.no_early,
        non_commands,
        not args.no_bare_ask,
        configured(args.set),
    )
    data["settings"] = args.set
    non = ("help_at_once", "help_asked", "other_at_once", "other_asked", "not_understood")
    call = ("sent", "asked", "lost")
    short = ("right", "asked", "wrong", "not_understood")
    rows = [
        [*key.split(" | "), t.get("non_n", 0) - t.get("non_no_wake", 0)]
        + [t.get(f"non_{w}", 0) for w in non]
        + [t.get("call_n", 0) - t.get("call_no_wake", 0)]
        + [t.get(f"call_{w}", 0) for w in call]
        + [t.get("short_n", 0) - t.get("short_no_wake", 0)]
        + [t.get(f"short_{w}", 0) for w in short]
        for key, t in data["table"].items()
    ]
    print_table(
        ["family", "room", "non (woke)", *non, "calls (woke)", *(f"call {w}" for w in call),
         "short (woke)", *(f"short {w}" for w in short)],
        rows,
    )  # fmt: skip
    print("decided after the end of speech, ms of audio (p50 / p95):")
    print_table(
        ["kind | family | room", "n", "p50", "p95"],
        [[k, v["n"], v.get("p50", "-"), v.get("p95", "-")]
         for k, v in data["decided_after_end_of_speech_ms"].items()],
    )  # fmt: skip
    print("CPU of each check's search, ms (p50 / p95; n: searches):")
    print_table(
        ["kind | family | room", "n", "p50", "p95"],
        [[k, v["n"], v.get("p50", "-"), v.get("p95", "-")]
         for k, v in data["check_cpu_ms"].items()],
    )  # fmt: skip
    early = data["early_check"]
    print(
        f"checks begun early (in the trailing silence): {early['searched']} searched, "
        f"{early['used']} used, {early['dropped']} thrown away "
        f"({early.get('cut_short', 0)} cut short; {early['dropped_cpu_ms']:.0f} ms of CPU; "
        "--no-early: none begun)"
    )
    print(f"cpu {data['cpu_seconds']} s, peak RSS {data['peak_rss_mb']} MB (machine shared)")
    print(write_results(name, data))


if __name__ == "__main__":
    main()
