"""Rebuilding the speech grammar for HA's slot lists: what it costs the frame loop.

Run on one core:  taskset -c 0 python bench/slot_rebuild.py

The frame loop is played by this process's main thread: it feeds 10 ms frames of a
wake word and a command (over a noise floor) through the whole pipeline (front end,
VAD, wake word, recognizer) in real time and polls the ``SlotGrammar``, while HA's new
names are built in the worker thread. A frame that waits for the GIL waits for the
build: the gaps between frames, against a run without a rebuild, measure the stall.
Writes bench/results/slot_rebuild.json and prints a table.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, stats_ms, write_results
from satellite.audio.framer import Framer
from satellite.config import Config
from satellite.pipeline import build_pipeline
from satellite.understanding import build_understanding
from satellite.understanding.slot_grammar import SlotGrammar
from tests import synth

FRAME_SECONDS = 0.01
#: Frames the loop runs at least (3 s).
MIN_FRAMES = 300
#: Names HA exposes, beyond the configured ones.
HA_NAMES = ("desk lamp", "porch light", "kettle", "bedroom tv", "hall thermostat")
HA_AREAS = ("office", "porch")


def measure(config: Config, rebuild: bool) -> dict[str, Any]:
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
        grammar.update(HA_NAMES, HA_AREAS)
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
    return {
        "rebuild_ms": built_ms,
        "frames_over_50ms": sum(1 for g in gaps if g > 50_000_000),
        "frame_gap": stats_ms(gaps),
    }


def main() -> int:
    base = Config()
    results: dict[str, Any] = {}
    rows = []
    for name, rebuild in (("no rebuild", False), ("rebuild", True)):
        with tempfile.TemporaryDirectory() as cache:
            config = dataclasses.replace(base, stt=dataclasses.replace(base.stt, cache_dir=cache))
            result = measure(config, rebuild)
        results[name] = result
        gap = result["frame_gap"]
        rows.append(
            [
                name,
                result["rebuild_ms"] or "-",
                gap["p50_ms"],
                gap["p99_ms"],
                gap["max_ms"],
                result["frames_over_50ms"],
            ]
        )
    print_table(
        ["frame loop", "rebuild ms", "gap p50 ms", "gap p99 ms", "gap max ms", "gaps > 50 ms"],
        rows,
    )
    print(f"wrote {write_results('slot_rebuild', results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
