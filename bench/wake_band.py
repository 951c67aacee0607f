"""The wake word's band check: detections below the model's cutoff taken only when a
second check hears "okay nabu" (frontend.wake.checked_above), measured per form.

Run on one core:  taskset -c 1 python bench/wake_band.py [--step 4] [--hours 0.1]

For "okay nabu, <command>" scenes (tests/corpus.py voices, every ``--step``-th command,
per voice family and room) heard as the default configuration hears them (webrtc level
2), and for reading with no wake word in it (``--hours`` per voice, every voice), the
detector runs with a band down to ``FLOOR``. Each band detection (followed to its peak)
is checked by every form of the check, and its scores kept; none is taken, so every
later band detection is checked too. A configuration (band floor, form, threshold) then
wakes a scene when the model passes its cutoff or a band detection above the floor
passes the check; its false wakes are the cutoff's plus the band detections it passes
(an upper bound: a real detector is quiet for 2 s after each).

Forms: ``kws@T``: PocketSphinx's keyphrase search at threshold T; ``score>=M``: the
phrase's per-frame log-likelihood ratio against a free phone loop at least M; ``kws@T &
score>=M``: both (the satellite's check, ``BothCheck``).

Writes bench/results/wake_band.json and prints the tables, with the CPU time of a check
and of its longest step (what holds the frame loop up).

``--as-configured``: the default configuration's detector itself (its band floor and
check, run a step a frame as in the satellite, and its expander in front) against the
model's cutoff alone, on the same scenes and on reading in four rooms; writes
bench/results/wake_band_default.json.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from satellite.frontend.base import WakeHit
from satellite.frontend.settings import WakeSettings
from satellite.frontend.wake_check import (
    BandCheck,
    KeyphraseCheck,
    PhraseScoreCheck,
    make_band_check,
)
from tests import corpus, robustness
from tests.understand import commands

#: The lowest band floor measured; the others are read from its detections (a band
#: detection is checked at each new peak above the one last rejected, so these hold the
#: peaks a higher floor checks, give or take one that rose from between the two floors).
FLOOR = 0.05
FLOORS = (0.5, 0.3, 0.2, 0.1)
KEYPHRASE_THRESHOLDS = (1e-80, 1e-60, 1e-40, 1e-20)
SCORE_MARGINS = (-40.0, -35.0, -30.0, -25.0, -20.0, -15.0, -10.0)
#: Margins of the score where the keyphrase search must find the phrase too.
BOTH_MARGINS = (-60.0, -50.0, -40.0)
#: The model's own cutoff for okay_nabu.
CUTOFF = 0.85
ROOMS = (
    corpus.Room("clean"),
    corpus.Room("reverb"),
    corpus.Room("white", 10.0),
    corpus.Room("babble", 10.0),
)
#: Rooms the reading with no wake word in it is heard in.
READING_ROOMS = (corpus.Room("clean"), corpus.Room("babble", 10.0), corpus.Room("white", 10.0))


class EveryForm:
    """A check that runs every form on a band detection, keeps the scores and the CPU
    time, and confirms nothing."""

    def __init__(self) -> None:
        self.forms: dict[str, Any] = {f"kws@{t:g}": KeyphraseCheck(t) for t in KEYPHRASE_THRESHOLDS}
        self.forms["score"] = PhraseScoreCheck()
        #: Per check: form -> score (None: not found).
        self.scores: list[dict[str, float | None]] = []
        #: Per form: CPU ms of each check, and of its longest step.
        self.cpu_ms: dict[str, list[float]] = {name: [] for name in self.forms}
        self.step_ms: dict[str, list[float]] = {name: [] for name in self.forms}

    def search(self, pcm: bytes) -> Generator[None, None, float | None]:
        found: dict[str, float | None] = {}
        for name, form in self.forms.items():
            steps = form.search(pcm)
            total, longest = 0.0, 0.0
            while True:
                began = time.thread_time()
                try:
                    next(steps)
                except StopIteration as done:
                    found[name] = done.value
                    spent = time.thread_time() - began
                    total, longest = total + spent, max(longest, spent)
                    break
                spent = time.thread_time() - began
                total, longest = total + spent, max(longest, spent)
            if name == "score":
                found["span"] = float(form.span_frames) if found[name] is not None else None
            self.cpu_ms[name].append(total * 1000)
            self.step_ms[name].append(longest * 1000)
        self.scores.append(found)
        yield
        return None

    def confirms(self, score: float | None) -> bool:
        return False


def passes() -> dict[str, Callable[[dict[str, float | None]], bool]]:
    """Each form and threshold: whether it passes a check's scores."""
    out: dict[str, Callable[[dict[str, float | None]], bool]] = {}
    for t in KEYPHRASE_THRESHOLDS:
        out[f"kws@{t:g}"] = functools.partial(_found, f"kws@{t:g}")
    for m in SCORE_MARGINS:
        out[f"score>={m:g}"] = functools.partial(_at_least, m)
    for m in BOTH_MARGINS:
        out[f"kws@1e-60 & score>={m:g}"] = functools.partial(_both, "kws@1e-60", m)
    return out


def _both(form: str, margin: float, scores: dict[str, float | None]) -> bool:
    return _found(form, scores) and _at_least(margin, scores)


def _found(form: str, scores: dict[str, float | None]) -> bool:
    return scores[form] is not None


def _at_least(margin: float, scores: dict[str, float | None]) -> bool:
    score = scores["score"]
    return score is not None and score >= margin


def heard(audio: Any, every: EveryForm) -> tuple[list[WakeHit], list[tuple[float, dict[str, Any]]]]:
    """The detector's hits at its cutoff, and each band detection's peak and scores."""
    band = BandCheck(every, FLOOR)
    before = len(every.scores)
    hits = robustness.wake_hits(audio, "webrtc2", band=band)
    scores = every.scores[before:]
    peaks = [(hit.probability, s) for (hit, _), s in zip(band.checked, scores, strict=True)]
    return hits, peaks


def configurations() -> list[str]:
    return ["cutoff", *(f"alone {f:g}" for f in FLOORS)] + [
        f"band {f:g} {name}" for f in FLOORS for name in passes()
    ]


def decide(hits: list[WakeHit], peaks: list[tuple[float, dict[str, Any]]]) -> dict[str, int]:
    """Per configuration: the detections it makes."""
    out = {"cutoff": len(hits)}
    for floor in FLOORS:
        above = [s for p, s in peaks if p > floor]
        out[f"alone {floor:g}"] = len(hits) + len(above)
        for name, ok in passes().items():
            out[f"band {floor:g} {name}"] = len(hits) + sum(ok(s) for s in above)
    return out


def run_scenes(every: EveryForm, step: int) -> dict[str, Any]:
    voices = corpus.available(corpus.VOICES_ALL)
    rows = [text for text, _, _ in commands()][::step]
    table: dict[str, Any] = {}
    for room in ROOMS:
        for family in corpus.FAMILIES:
            woke = dict.fromkeys(configurations(), 0)
            band: list[Any] = []
            for index, voice, text in corpus.in_turn(voices, family, rows):
                audio = robustness.scene(voice, text, room, index).audio
                hits, peaks = heard(audio, every)
                band += [(round(p, 3), sc) for p, sc in peaks if p > 0.2 and not hits]
                for name, count in decide(hits, peaks).items():
                    woke[name] += count > 0
            table[f"{family} | {room.label}"] = {
                "n": len(rows),
                "woken": {k: round(w / len(rows), 3) for k, w in woke.items()},
                "band_unwoken": band,
            }
            print(family, room.label, {k: woke[k] for k in list(woke)[:4]}, file=sys.stderr)
    return table


def run_false(every: EveryForm, hours_per_voice: float) -> dict[str, Any]:
    voices = corpus.available(corpus.VOICES_ALL)
    out: dict[str, Any] = {}
    for room in READING_ROOMS:
        total = dict.fromkeys(configurations(), 0)
        band: list[Any] = []
        for index, voice in enumerate(voices):
            reading = robustness.talk(voice, hours_per_voice * 3600.0, seed=index)
            audio = corpus.in_room(reading, room, index, reference=reading)
            hits, peaks = heard(audio, every)
            band += [(round(p, 3), sc) for p, sc in peaks]
            for name, count in decide(hits, peaks).items():
                total[name] += count
            print(room.label, voice.name, {k: total[k] for k in list(total)[:5]}, file=sys.stderr)
        hours = hours_per_voice * len(voices)
        out[room.label] = {
            "hours": round(hours, 3),
            "voices": [v.name for v in voices],
            "band": sorted(band, key=lambda b: -b[0]),
            "per_hour": {k: round(n / hours, 2) for k, n in total.items()},
            "count": total,
        }
    return out


def cost(every: EveryForm) -> dict[str, Any]:
    out = {}
    for name in every.forms:
        spent, steps = sorted(every.cpu_ms[name]), every.step_ms[name]
        if spent:
            out[name] = {
                "checks": len(spent),
                "cpu_ms_p50": round(spent[len(spent) // 2], 2),
                "cpu_ms_max": round(spent[-1], 2),
                "step_ms_max": round(max(steps), 2),
            }
    return out


class Timed:
    """The configured check, its CPU time per check and per step kept."""

    def __init__(self, check: Any) -> None:
        self.check = check
        self.cpu_ms: list[float] = []
        self.step_ms: list[float] = []
        self.steps: list[int] = []

    def search(self, pcm: bytes) -> Generator[None, None, float | None]:
        steps = self.check.search(pcm)
        total, longest, count = 0.0, 0.0, 0
        while True:
            began = time.thread_time()
            try:
                next(steps)
            except StopIteration as done:
                spent = time.thread_time() - began
                self.cpu_ms.append((total + spent) * 1000)
                self.step_ms.append(max(longest, spent) * 1000)
                self.steps.append(count + 1)
                result: float | None = done.value
                return result
            spent = time.thread_time() - began
            total, longest, count = total + spent, max(longest, spent), count + 1
            yield

    def confirms(self, score: float | None) -> bool:
        return bool(self.check.confirms(score))


def as_configured(step: int, hours_per_voice: float) -> dict[str, Any]:
    """The default configuration's detector (frontend.wake.checked_above and its check)
    against the model's cutoff alone: % woken per cell, false wakes per hour of reading
    per room, and the check's cost."""
    floor = WakeSettings().checked_above
    expand_db = WakeSettings().expand_db  # the expander in front, as configured
    made = make_band_check(floor, ("okay_nabu",))
    assert made is not None, "the band check is off by default"
    timed = Timed(made.check)
    voices = corpus.available(corpus.VOICES_ALL)
    rows = [text for text, _, _ in commands()][::step]
    scenes: dict[str, Any] = {}
    for room in ROOMS:
        for family in corpus.FAMILIES:
            alone = band = checked = 0
            for index, voice, text in corpus.in_turn(voices, family, rows):
                audio = robustness.scene(voice, text, room, index).audio
                alone += bool(robustness.wake_hits(audio, "webrtc2", expand_db=expand_db))
                band_check = BandCheck(timed, floor or 0, made.raised_above)
                hits = robustness.wake_hits(audio, "webrtc2", band=band_check, expand_db=expand_db)
                band += bool(hits)
                checked += bool(hits) and hits[0].checked
            scenes[f"{family} | {room.label}"] = {
                "n": len(rows),
                "cutoff": round(alone / len(rows), 3),
                "band": round(band / len(rows), 3),
                "woken_by_check": checked,
            }
            print(family, room.label, scenes[f"{family} | {room.label}"], file=sys.stderr)
    false: dict[str, Any] = {}
    for room in (*READING_ROOMS, corpus.Room("reverb")):
        counts = {"cutoff": 0, "band": 0, "checked": 0}
        before = len(timed.cpu_ms)
        for index, voice in enumerate(voices):
            reading = robustness.talk(voice, hours_per_voice * 3600.0, seed=index)
            audio = corpus.in_room(reading, room, index, reference=reading)
            band_check = BandCheck(timed, floor or 0, made.raised_above)
            hits = robustness.wake_hits(audio, "webrtc2", band=band_check, expand_db=expand_db)
            counts["cutoff"] += sum(not h.checked for h in hits)
            counts["band"] += len(hits)
        counts["checked"] = len(timed.cpu_ms) - before
        hours = hours_per_voice * len(voices)
        false[room.label] = {
            "hours": round(hours, 3),
            "false_wakes": counts["band"],
            "per_hour": round(counts["band"] / hours, 2),
            "at_cutoff": counts["cutoff"],
            "checks": counts["checked"],
        }
        print(room.label, false[room.label], file=sys.stderr)
    spent = sorted(timed.cpu_ms)
    return {
        "checked_above": floor,
        "scenes": scenes,
        "false_wakes": false,
        "cost": {
            "checks": len(spent),
            "cpu_ms_p50": round(spent[len(spent) // 2], 2) if spent else None,
            "cpu_ms_max": round(spent[-1], 2) if spent else None,
            "step_ms_max": round(max(timed.step_ms), 2) if spent else None,
            "steps": max(timed.steps) if spent else None,
        },
    }


def print_configured(result: dict[str, Any]) -> None:
    print(f"checked_above {result['checked_above']}: % woken, model cutoff alone -> band check")
    print_table(
        ["family | room", "n", "cutoff", "band check", "woken by the check"],
        [
            [k, c["n"], round(100 * c["cutoff"]), round(100 * c["band"]), c["woken_by_check"]]
            for k, c in result["scenes"].items()
        ],
    )
    print_table(
        ["reading in", "hours", "false wakes", "per hour", "at the cutoff", "checks run"],
        [
            [k, f["hours"], f["false_wakes"], f["per_hour"], f["at_cutoff"], f["checks"]]
            for k, f in result["false_wakes"].items()
        ],
    )
    print("check cost:", result["cost"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=4, help="every STEP-th command")
    parser.add_argument("--hours", type=float, default=0.1, help="reading per voice, h")
    parser.add_argument(
        "--as-configured",
        action="store_true",
        help="measure the default configuration's band check against the cutoff alone",
    )
    args = parser.parse_args()
    if args.as_configured:
        result = as_configured(args.step, args.hours)
        write_results("wake_band_default", result)
        print_configured(result)
        return 0
    every = EveryForm()
    scenes = run_scenes(every, args.step)
    false = run_false(every, args.hours)
    write_results(
        "wake_band",
        {
            "floor": FLOOR,
            "cutoff": CUTOFF,
            "scenes": scenes,
            "false_wakes": false,
            "cost": cost(every),
        },
    )
    shown = ["cutoff", *(c for c in configurations() if c != "cutoff")]
    print_table(
        ["configuration", *(f"false/h {r}" for r in false), *scenes],
        [
            [
                c,
                *(f["per_hour"][c] for f in false.values()),
                *(round(100 * s["woken"][c]) for s in scenes.values()),
            ]
            for c in shown
        ],
    )
    for room, f in false.items():
        print(f"\n{room}: {f['hours']} h of reading; band detections (peak, scores):")
        for peak, scores in f["band"][:12]:
            print(" ", peak, scores)
    print_table(
        ["form", "checks", "CPU ms p50", "CPU ms max", "longest step ms"],
        [[n, *c.values()] for n, c in cost(every).items()],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
