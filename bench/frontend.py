"""Front-end cost per 10 ms frame, idle (waiting for the wake word) and listening.

Run on one core:  taskset -c 0 python bench/frontend.py [--minutes 10]

Idle: the default pipeline replays N minutes of speech and noise with no wake word
(noise suppression, gain, wake word; the VAD sleeps until a wake word). Listening:
the same audio with every stage running on every frame (noise, gain, wake word, VAD,
recorder). Writes bench/results/frontend.json and prints a table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import peak_rss_mb, print_table, stats_ms, write_results
from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk
from satellite.config import Config
from satellite.frontend.recorder import UtteranceRecorder
from satellite.pipeline import Pipeline, build_pipeline
from satellite.stages import build_stages
from tests import synth

TARGETS = {"idle_mean_ms": 0.2, "listening_mean_ms": 1.0, "p99_ms": 3.0}
SENTENCES = [
    "good morning, how did you sleep last night",
    "the weather is lovely today, shall we go for a walk",
    "I would like a cup of tea with a little milk",
    "the bus leaves at half past nine from the corner",
    "can you remind me to take my tablets after lunch",
]


def make_audio(minutes: float) -> np.ndarray[tuple[int], np.dtype[np.int16]]:
    """Speech with pauses and some noisy stretches, no wake word."""
    voices = ["en-us", "en-gb-x-rp", "en-us+m3", "en+f3"]
    parts = []
    for index, sentence in enumerate(SENTENCES * len(voices)):
        speech = synth.espeak(sentence, voices[index % len(voices)], 150 + 10 * (index % 5))
        parts.append(np.concatenate([speech, synth.silence(1.5)]))
    block = np.concatenate(parts)
    block = block + synth.white_noise(len(block) / synth.RATE, 40.0, seed=1)
    repeats = int(np.ceil(minutes * 60 * synth.RATE / len(block)))
    audio = np.tile(block, repeats)[: int(minutes * 60 * synth.RATE)]
    return np.clip(np.round(audio), -32768, 32767).astype(np.int16)


def replay(
    pipeline: Pipeline, audio: np.ndarray[tuple[int], np.dtype[np.int16]]
) -> dict[str, float]:
    """Feed 10 ms chunks as a microphone would; time each call; CPU share of real time."""
    timings: list[int] = []
    cpu_start = time.process_time()
    for offset in range(0, len(audio) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        chunk = AudioChunk.from_int16(
            audio[offset : offset + FRAME_SAMPLES], timestamp_seconds=offset / synth.RATE
        )
        start = time.perf_counter_ns()
        pipeline.process(chunk)
        timings.append(time.perf_counter_ns() - start)
    cpu_seconds = time.process_time() - cpu_start
    result = stats_ms(timings)
    result["cpu_share_percent"] = round(100.0 * cpu_seconds / (len(audio) / synth.RATE), 2)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="idle replay length")
    parser.add_argument("--listening-minutes", type=float, default=2.0)
    args = parser.parse_args()

    print(f"synthesising {args.minutes:g} min of speech and noise ...", file=sys.stderr)
    audio = make_audio(max(args.minutes, args.listening_minutes))
    config = Config()

    print("idle replay ...", file=sys.stderr)
    idle = replay(build_pipeline(config), audio[: int(args.minutes * 60 * synth.RATE)])

    print("listening replay (every stage on every frame) ...", file=sys.stderr)
    stages = build_stages(config)
    stages.recorder = UtteranceRecorder(
        config.frontend.recorder,
        config.frontend.vad.threshold,
        continuous=True,
        lag_seconds=stages.vad.lag_seconds,
        warm_up_seconds=stages.vad.warm_up_seconds,
        end_lag_seconds=stages.vad.end_lag_seconds,
    )
    listening = replay(Pipeline(stages), audio[: int(args.listening_minutes * 60 * synth.RATE)])

    rows = []
    for name, result in (("idle", idle), ("listening", listening)):
        rows.append(
            [
                name,
                result["count"],
                result["mean_ms"],
                result["p50_ms"],
                result["p99_ms"],
                result["max_ms"],
                result["cpu_share_percent"],
            ]
        )
    print_table(["state", "frames", "mean ms", "p50 ms", "p99 ms", "max ms", "CPU %"], rows)
    verdict = {
        "idle_mean_ok": idle["mean_ms"] <= TARGETS["idle_mean_ms"],
        "listening_mean_ok": listening["mean_ms"] <= TARGETS["listening_mean_ms"],
        "p99_ok": max(idle["p99_ms"], listening["p99_ms"]) <= TARGETS["p99_ms"],
    }
    print(f"targets {TARGETS}: {verdict}")
    path = write_results(
        "frontend",
        {
            "idle_minutes": args.minutes,
            "listening_minutes": args.listening_minutes,
            "idle": idle,
            "listening": listening,
            "targets": TARGETS,
            "verdict": verdict,
            "peak_rss_mb": peak_rss_mb(),
            "config": {
                "noise": config.frontend.noise.engine,
                "vad": config.frontend.vad.engine,
                "wake": list(config.frontend.wake.models),
            },
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
