"""Rebuilding the speech grammar for HA's slot lists: time, memory, the frame loop, accuracy.

Run on one core:  taskset -c 0 python bench/slot_rebuild.py [--sizes 10,100,300,1000]
                                                     [--distinct 300,1000]

1. Size: for each number of names (in 20 areas, a real home's mix: tests/home_names.py),
   a fresh satellite process builds its understanding (idle), then gets HA's ``slots``:
   the build's seconds, peak RSS above idle, RSS after the swap, and RSS after two more
   updates of about the same size (does it grow?).
   The same for names that share no words (``--distinct``): the worst case.
2. Frame loop: 10 ms frames of a wake word and a command go through the whole pipeline
   in real time while 300 names are built in the worker; the gaps between frames,
   against a run without a rebuild, measure the stall.
3. Accuracy: commands naming 10 of the entities, synthesized in flite's and eSpeak's
   voices, recognized (grammar, then templates) with the grammar for those 10 names and
   with the one for all 300.

Writes bench/results/slot_rebuild.json and prints tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, stats_ms, write_results
from bench.memory import ProcStatus, reset_peak
from satellite.audio.framer import Framer
from satellite.config import Config
from satellite.nlu.intents import load_intent_set, merge_slots
from satellite.nlu.recognizer import TemplateRecognizer
from satellite.pipeline import build_pipeline
from satellite.stt.factory import make_recognizer
from satellite.stt.lexicon import default_dictionary, dictionary_words
from satellite.stt.sphinx import PocketSphinxRecognizer
from satellite.understanding import build_understanding
from satellite.understanding.slot_grammar import SlotGrammar, give_back_memory
from tests import synth
from tests.home_names import AREAS, distinct_names, home_names

FRAME_SECONDS = 0.01
#: Frames the loop runs at least (3 s).
MIN_FRAMES = 300
SIZES = (10, 100, 300, 1000)
DISTINCT_SIZES = (300, 1000)
#: Names in the frame-loop run and the large grammar of the accuracy run.
LARGE = 300
VOICES = (
    ("flite", "kal16"),
    ("flite", "slt"),
    ("flite", "awb"),
    ("flite", "rms"),
    ("espeak", "en-us"),
)
#: The room's noise floor under the commands (16-bit RMS, about -67 dBFS).
FLOOR_RMS = 15.0


def _config(cache: str) -> Config:
    base = Config()
    return dataclasses.replace(base, stt=dataclasses.replace(base.stt, cache_dir=cache))


def _settle(grammar: SlotGrammar, swaps: int) -> None:
    while grammar.swaps < swaps:
        grammar.wait(timeout=600)
        grammar.poll()
    grammar.wait(timeout=600)  # the old decoders' memory given back


# --- 1. size: one fresh process per number of names -------------------------------------


def _names(count: int, kind: str) -> tuple[str, ...]:
    """A home's mix of names, or (``distinct``) names that share no words, from CMUdict."""
    if kind == "home":
        return home_names(count)
    words = dictionary_words(default_dictionary("en"))
    return distinct_names(count, sorted(w for w in words if w.isalpha() and 5 <= len(w) <= 8)[::53])


def child(count: int, kind: str) -> dict[str, Any]:
    """In a fresh process: idle satellite understanding, then HA's lists, three times."""
    status = ProcStatus()
    with tempfile.TemporaryDirectory() as cache:
        config = _config(cache)
        understanding = build_understanding(config, use_llm=False)
        grammar = SlotGrammar(config, understanding)
        gc.collect()
        give_back_memory()
        idle_kb = status.rss_kb()
        reset_peak()
        started = time.perf_counter()
        grammar.update(_names(count, kind), AREAS)
        _settle(grammar, 1)
        build_seconds = time.perf_counter() - started
        after = status.read()
        held = grammar.status()
        recognizer = understanding.recognizer
        assert isinstance(recognizer, PocketSphinxRecognizer)
        arcs = (recognizer.grammar.word_arcs, recognizer.grammar.graph_arcs)
        del recognizer  # or its decoders outlive the next swap
        again = []
        for extra in (1, 2):  # HA adds a name, then another
            grammar.update(_names(count + extra, kind), AREAS)
            _settle(grammar, 1 + extra)
            again.append(round((status.rss_kb() - idle_kb) / 1024, 1))
        grammar.close()
    return {
        "names": count,
        "kind": kind,
        "areas": len(AREAS),
        "build_seconds": round(build_seconds, 2),
        "idle_rss_mb": round(idle_kb / 1024, 1),
        "peak_above_idle_mb": round((after["VmHWM"] - idle_kb) / 1024, 1),
        "rss_after_above_before_mb": round((after["VmRSS"] - idle_kb) / 1024, 1),
        "rss_after_next_updates_above_before_mb": again,
        "grammar_names": held.names,
        "grammar_areas": held.areas,
        "grammar_word_arcs": arcs[0],
        "template_graph_arcs": arcs[1],
    }


def sizes(counts: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """Each count in its own process (a clean idle and peak)."""
    out = []
    for count, kind in counts:
        run = subprocess.run(
            [sys.executable, __file__, "--child", str(count), "--kind", kind],
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(json.loads(run.stdout.strip().splitlines()[-1]))
        print(f"  {count} {kind} names: {out[-1]['build_seconds']} s", flush=True)
    return out


# --- 2. the frame loop while 300 names are built ----------------------------------------


def frame_loop(config: Config, rebuild: bool) -> dict[str, Any]:
    """Gaps between frames for 3 s, or while one rebuild runs, and how long it took."""
    understanding = build_understanding(config, use_llm=False)
    pipeline = build_pipeline(config, understanding=understanding)
    grammar = SlotGrammar(config, understanding)
    scene = synth.wake_scene("turn on the kitchen light", "en-us", 150, tail_seconds=3.0)
    audio = scene.audio + synth.white_noise(len(scene.audio) / synth.RATE, 15.0, seed=1)
    frames = list(Framer().push(synth.to_chunk(audio)))
    gaps: list[int] = []
    built_ms = None
    started = time.perf_counter()
    if rebuild:
        grammar.update(home_names(LARGE), AREAS)
    last = time.perf_counter_ns()
    next_tick = time.perf_counter()
    while grammar.pending or len(gaps) < MIN_FRAMES:
        next_tick += FRAME_SECONDS
        time.sleep(max(0.0, next_tick - time.perf_counter()))
        now = time.perf_counter_ns()
        gaps.append(now - last)
        last = now
        pipeline.process(frames[len(gaps) % len(frames)])
        if grammar.poll():
            built_ms = round((time.perf_counter() - started) * 1000.0, 1)
    assert grammar.swaps == int(rebuild), "the rebuild did not swap in"
    grammar.close()
    return {
        "rebuild_ms": built_ms,
        "frames_over_50ms": sum(1 for g in gaps if g > 50_000_000),
        "frame_gap": stats_ms(gaps),
    }


# --- 3. accuracy with 10 and with 300 names ---------------------------------------------


def _speech(text: str, engine: str, voice: str) -> synth.Float:
    speech = synth.flite(text, voice) if engine == "flite" else synth.espeak(text, voice, 160)
    audio = np.concatenate([synth.silence(0.3), speech, synth.silence(0.5)])
    return audio + synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed=1)


def accuracy(config: Config, names: tuple[str, ...], spoken: tuple[str, ...]) -> dict[str, Any]:
    """Commands naming ``spoken`` heard with a grammar built for ``names``."""
    entities, areas = merge_slots(config.nlu.entities, names, AREAS)
    intent_set = load_intent_set(
        config.satellite.language, config.nlu.intents, entities, areas, config.satellite.area
    )
    recognizer = make_recognizer(config.stt, config.satellite.language, intent_set)
    templates = TemplateRecognizer(intent_set)
    heard = exact = understood = 0
    misses: list[str] = []
    for name in spoken:
        for verb, intent in (("on", "HassTurnOn"), ("off", "HassTurnOff")):
            text = f"turn {verb} the {name}"
            for engine, voice in VOICES:
                recognizer.start(0.0)
                for frame in Framer().push(synth.to_chunk(_speech(text, engine, voice))):
                    recognizer.process(frame)
                result = recognizer.finish()
                heard += 1
                exact += result.text == text
                got = templates.recognize(result.text) if result.in_grammar else None
                if got is not None and (got.intent, got.slots.get("name")) == (intent, name):
                    understood += 1
                else:
                    misses.append(f"{voice}: {text!r} -> {result.text!r}")
    return {
        "grammar_names": len(names),
        "commands": heard,
        "exact_transcripts": exact,
        "understood": understood,
        "understood_share": round(understood / heard, 3),
        "misses": misses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument(
        "--distinct",
        default=",".join(map(str, DISTINCT_SIZES)),
        help="numbers of names sharing no words (the worst case); empty for none",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="home", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.kind)))
        return 0
    print("grammar size, time and memory per number of names (a process each):")
    runs = [(int(n), "home") for n in args.sizes.split(",") if n]
    by_size = sizes(runs + [(int(n), "distinct") for n in args.distinct.split(",") if n])
    loop: dict[str, Any] = {}
    for label, rebuild in (("no rebuild", False), (f"rebuild {LARGE} names", True)):
        with tempfile.TemporaryDirectory() as cache:
            loop[label] = frame_loop(_config(cache), rebuild)
    large = home_names(LARGE)
    spoken = large[:: LARGE // 10][:10]
    with tempfile.TemporaryDirectory() as cache:
        config = _config(cache)
        heard = {f"{len(n)} names": accuracy(config, n, spoken) for n in (spoken, large)}
    print_table(
        ["names", "kind", "build s", "peak MB above idle", "RSS after MB", "after 2 more", "arcs"],
        [
            [
                r["names"],
                r["kind"],
                r["build_seconds"],
                r["peak_above_idle_mb"],
                r["rss_after_above_before_mb"],
                r["rss_after_next_updates_above_before_mb"],
                r["grammar_word_arcs"],
            ]
            for r in by_size
        ],
    )
    print_table(
        ["frame loop", "rebuild ms", "gap p50 ms", "gap p99 ms", "gap max ms", "gaps > 50 ms"],
        [
            [
                label,
                r["rebuild_ms"] or "-",
                r["frame_gap"]["p50_ms"],
                r["frame_gap"]["p99_ms"],
                r["frame_gap"]["max_ms"],
                r["frames_over_50ms"],
            ]
            for label, r in loop.items()
        ],
    )
    print_table(
        ["grammar", "commands", "exact", "understood", "share"],
        [
            [label, r["commands"], r["exact_transcripts"], r["understood"], r["understood_share"]]
            for label, r in heard.items()
        ],
    )
    results = {"sizes": by_size, "frame_loop": loop, "accuracy": heard, "spoken_names": spoken}
    print(f"wrote {write_results('slot_rebuild', results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
