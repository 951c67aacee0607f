"""Precision: which doubt signal catches wrong commands (in reverberation above all)
while letting right ones through at once.

Run on one core:  taskset -c 1 python bench/precision.py [--step 2] [--rooms clean reverb]
Choose again on saved hearings:  python bench/precision.py --reuse bench/results/A.json ...

Every ``--step``-th command of tests/data/commands.tsv after "okay nabu", in each voice
family (its voices in turn) and room (clean, reverb, white and babble 10 dB), replayed
through the satellite (default configuration, no LLM) twice: two takes of the room, as
bench/robustness.py says it again when asked. For each take it collects the candidate
signals of the first hearing: its confidence (grammar vs phone loop, today's doubt
signal), its second-worst and worst word and its slot words' scores against the phone
loop, the room's reverberation (stt/reverberation.py), whether the room was loud, and
the share of its words an open-vocabulary transcription (the full language model, as
the LLM path makes) also heard. Then each rule (ask again when a signal doubts; in a
reverberant room, ask again and refuse below a threshold) is tried on the collected hearings
as the dialogue would act on them (a doubtful first hearing is asked again; the second
take is acted on when it repeats the first or is not doubtful itself): its threshold is
chosen on the even-numbered commands and checked on the odd ones.

Writes bench/results/precision.json (the hearings and every rule's table) and prints the
tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.nlu.recognizer import IntentResult
from satellite.stt.sphinx import OpenTranscriber
from satellite.understanding import Understanding
from satellite.understanding.dialogue import repeats
from tests import corpus, robustness, synth
from tests.understand import commands

ROOMS = {
    "clean": corpus.Room("clean"),
    "reverb": corpus.Room("reverb"),
    "white10": corpus.Room("white", 10.0),
    "babble10": corpus.Room("babble", 10.0),
}
#: Words an open transcription need not hear for a grammar result to agree with it.
_SMALL_WORDS = frozenset({"the", "a", "an", "to", "of", "in", "on", "is", "it", "my", "me"})


@dataclass
class Hearing:
    """The first hearing of one take of a command, and its candidate signals."""

    woke: bool
    intent: str | None = None
    slots: dict[str, Any] | None = None
    text: str = ""
    confidence: float = 0.0
    doubtful_today: bool = False
    loud: bool = False
    reverb_seconds: float | None = None
    score: float | None = None
    worst_word: float | None = None
    second_worst_word: float | None = None
    slot_word: float | None = None
    open_agree: float | None = None

    def result(self) -> IntentResult:
        return IntentResult(self.intent, dict(self.slots or {}), self.confidence)


@dataclass
class Case:
    """One command in one room, said twice."""

    room: str
    family: str
    voice: str
    index: int
    #: Its place among the commands taken (even and odd halves).
    order: int
    said: str
    intent: str
    slots: dict[str, Any]
    takes: list[Hearing]


def _open_agree(text: str, transcript: str) -> float:
    words = [w for w in text.split() if w not in _SMALL_WORDS]
    heard = set(transcript.split())
    return round(sum(w in heard for w in words) / len(words), 3) if words else 1.0


def hear(
    config: Config,
    understanding: Understanding,
    transcriber: OpenTranscriber | None,
    scene: robustness.Scene,
) -> Hearing:
    """The first hearing of ``scene`` and its signals."""
    heard = robustness.replay(config, scene.audio, False, understanding)
    first = heard.first
    if not heard.wakes or first is None:
        return Hearing(bool(heard.wakes))
    report = understanding.reports.get(first.utterance_id)
    got = first.result
    out = Hearing(True, got.intent, dict(got.slots), got.text, got.confidence, first.doubtful)
    if report is None or report.stt is None:
        return out
    out.loud, out.reverb_seconds = report.loud, report.reverb_seconds
    out.score = report.stt.score_per_frame
    scores = sorted(w.score for w in report.stt.words if w.score is not None)
    if scores:
        out.worst_word, out.second_worst_word = scores[0], scores[min(1, len(scores) - 1)]
    slot_words = {w for v in got.slots.values() if isinstance(v, str) for w in v.split()}
    slot_scores = [
        w.score for w in report.stt.words if w.word in slot_words and w.score is not None
    ]
    out.slot_word = min(slot_scores) if slot_scores else None
    if transcriber is not None and got.intent is not None:
        start = max(0, round(report.start_seconds * synth.RATE) - 1600)
        end = round(report.end_seconds * synth.RATE) + 3200
        samples = np.clip(np.round(scene.audio[start:end]), -32768, 32767).astype("<i2")
        transcript = transcriber.transcribe(AudioChunk.from_int16(samples, timestamp_seconds=0.0))
        out.open_agree = _open_agree(got.text.lower(), transcript.lower())
    return out


def collect(rooms: Sequence[str], step: int, use_open: bool) -> list[Case]:
    config = Config()
    understanding = robustness.listener(config)
    transcriber = None
    if use_open:
        from satellite.stt.lexicon import pocketsphinx_model_dir  # noqa: PLC0415

        transcriber = OpenTranscriber(pocketsphinx_model_dir(config.satellite.language))
    voices = corpus.available(corpus.VOICES_ALL)
    rows = commands()
    cases = []
    for name in rooms:
        room, started = ROOMS[name], time.perf_counter()
        for family in corpus.FAMILIES:
            members = [v for v in voices if v.family == family]
            for index in range(0, len(rows), step):
                text, intent, slots = rows[index]
                voice = members[(index // step) % len(members)]
                takes = []
                for seed in (index, index + 1000):
                    scene = robustness.scene(voice, text, room, seed)
                    takes.append(hear(config, understanding, transcriber, scene))
                    if takes[0].intent is None:
                        break  # nothing to ask about
                cases.append(
                    Case(
                        name,
                        family,
                        voice.label,
                        index,
                        index // step,
                        text,
                        intent or "",
                        slots,
                        takes,
                    )
                )
        print(f"  {name}: {time.perf_counter() - started:.0f} s", flush=True)
    return cases


# --- doubt rules, tried on what was collected -------------------------------------------

#: What a rule makes of a hearing: acted on at once, asked about once more, or not
#: understood (rejected: not asked about).
ACT, DOUBT, REJECT = "act", "doubt", "reject"
Rule = Callable[[Hearing], str]
#: A room sounding more reverberant than this is reverberant (the rules that reject).
REVERBERANT_SECONDS = 0.1


def _below(value: float | None, threshold: float) -> bool:
    return value is not None and value < threshold


def _doubt(when: Callable[[Hearing], bool]) -> Rule:
    """Today's rule (loud, or less confident than 0.86), or ``when``: asked again."""
    return lambda h: DOUBT if h.loud or h.confidence < 0.86 or when(h) else ACT


def _reverberant(h: Hearing) -> bool:
    """As stt/session.py and nlu/trust.py judge it: a quiet room only."""
    return not h.loud and (h.reverb_seconds or 0.0) > REVERBERANT_SECONDS


def _reject_reverberant(when: Callable[[Hearing], bool]) -> Rule:
    """Asked again in a reverberant room, and not understood there when ``when``."""
    doubt = _doubt(_reverberant)
    return lambda h: REJECT if _reverberant(h) and when(h) else doubt(h)


today = _doubt(lambda h: False)

RULES: dict[str, tuple[Callable[[float], Rule], Sequence[float]]] = {
    "confidence": (
        lambda t: _doubt(lambda h: h.confidence < t),
        [0.86, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999],
    ),
    "reverb": (
        lambda t: _doubt(lambda h: (h.reverb_seconds or 0.0) > t),
        [0.08, 0.09, 0.1, 0.11, 0.12, 0.14],
    ),
    "worst_word": (
        lambda t: _doubt(lambda h: _below(h.worst_word, t)),
        [-40.0, -30.0, -25.0, -20.0, -15.0, -10.0, -5.0],
    ),
    "second_worst_word": (
        lambda t: _doubt(lambda h: _below(h.second_worst_word, t)),
        [-30.0, -20.0, -15.0, -10.0, -5.0, 0.0],
    ),
    "slot_word": (
        lambda t: _doubt(lambda h: _below(h.slot_word, t)),
        [-30.0, -20.0, -15.0, -10.0, -5.0, 0.0],
    ),
    "open_agree": (
        lambda t: _doubt(lambda h: _below(h.open_agree, t)),
        [0.3, 0.5, 0.7, 0.9, 1.0],
    ),
    "reverb+reject_confidence": (
        lambda t: _reject_reverberant(lambda h: h.confidence < t),
        [0.0, 0.86, 0.9, 0.95, 0.97, 0.98, 0.99],
    ),
    "reverb+reject_second_worst_word": (
        lambda t: _reject_reverberant(lambda h: _below(h.second_worst_word, t)),
        [-40.0, -30.0, -25.0, -20.0, -15.0, -10.0],
    ),
    "reverb+reject_worst_word": (
        lambda t: _reject_reverberant(lambda h: _below(h.worst_word, t)),
        [-50.0, -40.0, -30.0, -25.0, -20.0, -15.0],
    ),
}


def outcome(case: Case, rule: Rule) -> str:
    """What the dialogue comes to with ``rule`` (see tests/robustness.py)."""
    first = case.takes[0]
    if not first.woke:
        return robustness.NO_WAKE
    said = rule(first) if first.intent is not None else REJECT
    if said == REJECT:
        return robustness.NOT_UNDERSTOOD
    if said == ACT:
        return robustness.outcome(first.result(), case.intent, case.slots)
    again = case.takes[1] if len(case.takes) > 1 else None
    if again is None or not again.woke or again.intent is None or rule(again) == REJECT:
        return robustness.NOT_UNDERSTOOD
    repeated = repeats(first.result(), again.result())
    acted = again.result() if repeated or rule(again) == ACT else None
    result = robustness.outcome(acted, case.intent, case.slots)
    return robustness.RIGHT_AFTER_ASKING if result == robustness.RIGHT else result


def table(cases: Sequence[Case], doubt: Rule) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for case in cases:
        out.setdefault(f"{case.family} | {case.room}", {"tally": robustness.Tally()})
        out[f"{case.family} | {case.room}"]["tally"].add(outcome(case, doubt))
    return {k: v["tally"].to_dict() for k, v in out.items()}


def cost(rows: dict[str, dict[str, Any]]) -> float:
    """Lower is better: a wrong intent costs 10 right ones, a false call for help 20."""
    total = 0.0
    for row in rows.values():
        right = row[robustness.RIGHT] + row[robustness.RIGHT_AFTER_ASKING]
        total += 10 * row[robustness.WRONG] + 20 * row[robustness.FALSE_HELP] - right
    return round(total, 4)


def choose(cases: Sequence[Case]) -> dict[str, Any]:
    """Each rule's threshold chosen on the even commands, checked on the odd ones."""
    even = [c for c in cases if c.order % 2 == 0]
    odd = [c for c in cases if c.order % 2 == 1]
    chosen: dict[str, Any] = {"today": {"even": table(even, today), "odd": table(odd, today)}}
    for name, (make, thresholds) in RULES.items():
        sweep = {t: cost(table(even, make(t))) for t in thresholds}
        best = min(sweep, key=lambda t: sweep[t])
        chosen[name] = {
            "threshold": best,
            "sweep_cost_even": sweep,
            "even": table(even, make(best)),
            "odd": table(odd, make(best)),
        }
    return chosen


def print_rule(name: str, part: dict[str, Any]) -> None:
    print(f"\n{name} (threshold {part.get('threshold', '-')}), even | odd halves, %:")
    rows = []
    for key in part["even"]:
        row = [*key.split(" | ")]
        for half in ("even", "odd"):
            r = part[half].get(key)
            if r is None:
                row += ["-"] * 5
                continue
            row += [r["n"]] + [
                f"{100 * r[w]:.0f}"
                for w in (
                    robustness.RIGHT,
                    robustness.RIGHT_AFTER_ASKING,
                    robustness.WRONG,
                    robustness.FALSE_HELP,
                )
            ]
        rows.append(row)
    head = ["n", "right", "asked", "wrong", "help"]
    print_table(["family", "room", *head, *head], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=2, help="every STEP-th command")
    parser.add_argument("--rooms", nargs="*", default=list(ROOMS), choices=list(ROOMS))
    parser.add_argument("--no-open", action="store_true", help="no open transcription")
    parser.add_argument("--name", default="precision", help="results file name")
    parser.add_argument(
        "--reuse", nargs="*", metavar="JSON", help="choose again on the cases of these results"
    )
    args = parser.parse_args()
    made_by: dict[str, Any] = {"step": args.step, "rooms": args.rooms}
    if args.reuse:
        cases = []
        made_by = {"reused": {}}
        for path in args.reuse:
            saved = json.loads(Path(path).read_text())
            made_by["reused"][Path(path).name] = saved.get("made_by", {"step": saved.get("step")})
            cases += [
                Case(**{**c, "takes": [Hearing(**h) for h in c["takes"]]}) for c in saved["cases"]
            ]
    else:
        cases = collect(args.rooms, args.step, not args.no_open)
    chosen = choose(cases)
    for name, part in chosen.items():
        print_rule(name, part)
    print(write_results(args.name, {"made_by": made_by, "rules": chosen,
                                      "cases": [asdict(c) for c in cases]}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
