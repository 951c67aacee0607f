"""Speech out: our in-process eSpeak NG against the ``espeak-ng --stdout`` program.

Run on one core:  taskset -c 0 python bench/tts.py [--repeats 20]

For sentences of 5, 15 and 42 words, both paths feed the same player (a counting sink,
not paced, so the numbers are the synthesiser's): ours through ``Speaker.say()`` (text
splitter, engine warmed up, TTS thread), the program through its stdout pipe as it
streams. Measured from the call: the first audio chunk at the player, and the whole
reply at the player (real-time factor = that time / seconds of audio). The sentences
open with the same words, so only their length differs: how soon eSpeak's first block
is ready depends on the first sounds ("Turn ..." is ~0.1 ms sooner than "The ..."), not
on the length. Peak RSS: this process for ours (Python, numpy, the engine, the player),
and the program's own, taken by GNU ``time`` in separate runs (a child forked from
Python would count Python's pages as its own). Writes bench/results/tts.json and prints
a table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import peak_rss_mb, print_table, write_results
from satellite.audio.chunk import AudioChunk
from satellite.audio.io import NullSink
from satellite.audio.player import Player
from satellite.audio.settings import PlayerSettings
from satellite.tts.espeak import DEFAULT_VOICE, EspeakEngine
from satellite.tts.speaker import Speaker

RATE_WPM = 160
TARGETS = {
    "first_audio_ms_max": 10.0,
    "ratio_42_to_5_words_max": 1.5,
    "program_over_ours_42_words_min": 3.0,
}
SENTENCES = {
    5: "The kitchen light is on.",
    15: "The kitchen light is on, and the front door has been locked for the night.",
    42: (
        "The kitchen light is on, the front door is locked, and it is a quarter past seven, "
        "so after breakfast you could take a walk to the bench by the pond before your "
        "daughter arrives at ten with the shopping you wanted."
    ),
}
WAV_HEADER_BYTES = 44


class TimingPlayer(Player):
    """A player that notes when the first chunk of each reply arrives."""

    def __init__(self) -> None:
        super().__init__(NullSink(), PlayerSettings())
        self.first_at: float | None = None
        self.audio_seconds = 0.0

    def begin(self, reply_id: str = "") -> None:
        self.first_at = None
        self.audio_seconds = 0.0
        super().begin(reply_id)

    def write(self, chunk: AudioChunk) -> bool:
        if self.first_at is None:
            self.first_at = time.perf_counter()
        self.audio_seconds += chunk.seconds
        return super().write(chunk)


def ours(speaker: Speaker, player: TimingPlayer, text: str) -> dict[str, float]:
    """One reply through the TTS thread: first chunk and whole reply at the player."""
    start = time.perf_counter()
    reply = speaker.say(text)
    reply.wait()
    done = time.perf_counter()
    assert player.first_at is not None
    player.wait()
    return {
        "first_ms": (player.first_at - start) * 1e3,
        "total_ms": (done - start) * 1e3,
        "audio_seconds": player.audio_seconds,
    }


def program(player: TimingPlayer, text: str) -> dict[str, float]:
    """One reply from ``espeak-ng --stdout``, streamed from its pipe into the player."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        ["espeak-ng", "-v", DEFAULT_VOICE, "-s", str(RATE_WPM), "--stdout", text],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    player.begin("program")
    header = b""
    pending = b""
    while True:
        data = os.read(proc.stdout.fileno(), 65536)
        if not data:
            break
        if len(header) < WAV_HEADER_BYTES:
            take = WAV_HEADER_BYTES - len(header)
            header, data = header + data[:take], data[take:]
        pending += data
        whole = len(pending) - len(pending) % 2
        if whole:
            player.write(AudioChunk(22050, 2, 1, pending[:whole]))
            pending = pending[whole:]
    proc.wait()
    done = time.perf_counter()
    player.end()
    assert player.first_at is not None
    player.wait()
    return {
        "first_ms": (player.first_at - start) * 1e3,
        "total_ms": (done - start) * 1e3,
        "audio_seconds": player.audio_seconds,
    }


def program_rss_mb(text: str) -> float | None:
    """Peak RSS of one ``espeak-ng --stdout`` run, MB (None without GNU time)."""
    gnu_time = shutil.which("time")
    if gnu_time is None:
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as report:
        subprocess.run(
            [
                gnu_time,
                "-f",
                "%M",
                "-o",
                report.name,
                "espeak-ng",
                "-v",
                DEFAULT_VOICE,
                "--stdout",
                text,
            ],
            stdout=subprocess.DEVNULL,
            check=True,
        )
        return round(int(report.read().split()[-1]) / 1024.0, 1)


def summarise(runs: list[dict[str, float]]) -> dict[str, float]:
    first = np.array([r["first_ms"] for r in runs])
    total = np.array([r["total_ms"] for r in runs])
    audio = float(np.median([r["audio_seconds"] for r in runs]))
    return {
        "first_audio_ms_p50": round(float(np.median(first)), 3),
        "first_audio_ms_p95": round(float(np.percentile(first, 95)), 3),
        "total_ms_p50": round(float(np.median(total)), 2),
        "audio_seconds": round(audio, 2),
        "real_time_factor": round(float(np.median(total)) / 1e3 / audio, 4),
        "runs": len(runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="replies per sentence and path")
    args = parser.parse_args()
    for words, text in SENTENCES.items():
        assert len(text.split()) == words, (words, len(text.split()))

    print(f"warming up the in-process engine (voice {DEFAULT_VOICE})", file=sys.stderr)
    rss_before_mb = peak_rss_mb()
    start = time.perf_counter()
    engine = EspeakEngine(DEFAULT_VOICE, rate_wpm=RATE_WPM)
    engine.warm_up()
    warm_up_ms = (time.perf_counter() - start) * 1e3
    player = TimingPlayer()
    speaker = Speaker(engine, player)
    ours(speaker, player, "Warming up.")
    program(player, "Warming up.")

    results: dict[str, Any] = {}
    rows = []
    for words, text in SENTENCES.items():
        print(f"{words} words: {args.repeats} replies each way", file=sys.stderr)
        our_runs, program_runs = [], []
        for _ in range(args.repeats):  # interleaved, so both see the same machine load
            our_runs.append(ours(speaker, player, text))
            program_runs.append(program(player, text))
        results[f"{words}_words"] = {
            "in_process": summarise(our_runs),
            "espeak_ng_program": summarise(program_runs),
        }
        for name, summary in results[f"{words}_words"].items():
            rows.append(
                [
                    words,
                    name,
                    summary["first_audio_ms_p50"],
                    summary["first_audio_ms_p95"],
                    summary["real_time_factor"],
                    summary["audio_seconds"],
                ]
            )
    speaker.close()
    player.close()

    in_process_rss_mb = peak_rss_mb()
    program_rss = [program_rss_mb(text) for text in SENTENCES.values()]
    program_peak_mb = None if None in program_rss else max(r for r in program_rss if r)
    ours_5 = results["5_words"]["in_process"]["first_audio_ms_p50"]
    ours_42 = results["42_words"]["in_process"]["first_audio_ms_p50"]
    program_42 = results["42_words"]["espeak_ng_program"]["first_audio_ms_p50"]
    measured = {
        "first_audio_ms_max": max(results[k]["in_process"]["first_audio_ms_p50"] for k in results),
        "ratio_42_to_5_words_max": round(ours_42 / ours_5, 2),
        "program_over_ours_42_words_min": round(program_42 / ours_42, 1),
    }
    verdict = {
        "first_audio_ms_max": measured["first_audio_ms_max"] <= TARGETS["first_audio_ms_max"],
        "ratio_42_to_5_words_max": measured["ratio_42_to_5_words_max"]
        <= TARGETS["ratio_42_to_5_words_max"],
        "program_over_ours_42_words_min": measured["program_over_ours_42_words_min"]
        >= TARGETS["program_over_ours_42_words_min"],
    }
    print_table(["words", "path", "first audio p50 ms", "p95 ms", "RTF", "audio s"], rows)
    print(
        f"peak RSS: in-process {in_process_rss_mb} MB (whole Python process; "
        f"{rss_before_mb} MB before the engine), espeak-ng program {program_peak_mb} MB"
    )
    print(f"engine start and warm-up: {warm_up_ms:.1f} ms")
    for key, ok in verdict.items():
        print(f"{key}: {measured[key]} (target {TARGETS[key]}) {'PASS' if ok else 'FAIL'}")
    path = write_results(
        "tts",
        {
            "voice": DEFAULT_VOICE,
            "rate_wpm": RATE_WPM,
            "sentences": {str(k): v for k, v in SENTENCES.items()},
            "results": results,
            "peak_rss_mb": {
                "in_process": in_process_rss_mb,
                "in_process_before_engine": rss_before_mb,
                "espeak_ng_program": program_peak_mb,
            },
            "engine_warm_up_ms": round(warm_up_ms, 1),
            "targets": TARGETS,
            "measured": measured,
            "verdict": verdict,
            "player": {
                "sink": "counting, not paced",
                "prebuffer_ms": PlayerSettings().prebuffer_ms,
            },
        },
    )
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
