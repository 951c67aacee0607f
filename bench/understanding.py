"""Understanding: STT cost, end of speech -> intent latency, LLM fallback latency and RSS.

Run on one core:  taskset -c 0 python bench/understanding.py [--voices 3]

Commands from tests/data/commands.tsv are spoken by eSpeak NG voices after the wake word
("okay nabu"), over a faint noise floor (a microphone never gives digital silence), and
replayed frame by frame through the pipeline as the satellite hears them. Latency from
the true end of the command to the intent event = the audio that had to pass before the
endpoint was decided (VAD lag + trailing silence) + the compute time of the frame that
decided it (STT finish, templates). It is measured with early endpointing on and off,
in a loud room (white noise at 10 dB SNR), where a device action is searched a second
time, heard the other way (raw and denoised), before it is done, and alone with no wake
word before them (continuous listening). An utterance the streaming search did not trust
is searched again from its own cepstral mean: how often, and what it cost. A reply may
begin once the pipeline no longer hears anyone: after a wake word, when the follow-on
window after the command has passed (``recorder.follow_on_ms`` from the end of speech):
how long after the end of speech that is.
The LLM fallback is timed on the help phrasings (warm), from its very first start (the
prompt prefix evaluated) and from a start with that cached. Writes
bench/results/understanding.json and prints a table.
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import peak_rss_mb, print_table, stats_ms, write_results
from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk
from satellite.config import Config
from satellite.events import Event
from satellite.nlu.events import IntentRecognized
from satellite.nlu.intents import CARE_INTENTS
from satellite.nlu.llm import LlmFallback
from satellite.pipeline import build_pipeline
from satellite.understanding import build_understanding
from tests import synth
from tests.understand import FLOOR_RMS, commands, lines

VOICES = ["en-us", "en-gb-x-rp", "en-us+m3", "en+f3", "en+m7"]
#: The loud room: white noise this far below the command, dB.
LOUD_SNR_DB = 10.0
TARGETS = {"intent_p95_ms": 350.0, "llm_warm_ms": 300.0, "llm_cold_ms": 1000.0, "help_recall": 0.9}


def replay(
    config: Config,
    text: str,
    voice: str,
    rate: int,
    seed: int = 0,
    snr_db: float | None = None,
    wake: bool = True,
) -> dict[str, Any]:
    """One command: frame-by-frame replay, timing each frame's processing. Without
    ``wake`` the command is alone, heard by a continuously listening pipeline."""
    if wake:
        scene = synth.wake_scene(text, voice, rate, lead_seconds=0.8)
    else:
        command = synth.espeak(text, voice, rate)
        scene = synth.Scene(
            np.concatenate([synth.silence(0.8), command, synth.silence(1.5)]),
            0.8,
            0.8 + len(command) / synth.RATE,
        )
    audio = scene.audio + synth.white_noise(len(scene.audio) / synth.RATE, FLOOR_RMS, seed)
    if snr_db is not None:
        start, end = (round(t * synth.RATE) for t in scene.command_span)
        audio = synth.add_noise(audio, snr_db, seed=100 + seed, reference=audio[start:end])
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    end_seconds = scene.command_end_seconds
    understanding = build_understanding(config, use_llm=False)
    understanding.prosody = None
    pipeline = build_pipeline(config, continuous=not wake, understanding=understanding)
    stt_ns: list[int] = []
    result: dict[str, Any] = {"text": text, "voice": voice, "intent": None}
    for offset in range(0, len(samples) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        chunk = AudioChunk.from_int16(
            samples[offset : offset + FRAME_SAMPLES], timestamp_seconds=offset / synth.RATE
        )
        start = time.perf_counter_ns()
        events: list[Event] = pipeline.process(chunk)
        spent = time.perf_counter_ns() - start
        stt_ns.append(spent)
        for event in events:
            if isinstance(event, IntentRecognized) and result["intent"] is None:
                result["intent"] = event.intent
                result["latency_ms"] = (chunk.end_seconds - end_seconds) * 1000.0 + spent / 1e6
                report = understanding.reports[event.utterance_id]
                result["reason"] = report.reason
                result["second_hearing_ms"] = report.timings_ms.get("second_hearing")
                result["own_mean_ms"] = report.timings_ms.get("own_mean_search")
        if "latency_ms" in result and "reply_ms" not in result and not pipeline.hearing:
            result["reply_ms"] = (chunk.end_seconds - end_seconds) * 1000.0
    result["frame_ns"] = stt_ns
    result["audio_seconds"] = len(samples) / synth.RATE
    return result


def run_commands(
    config: Config, voices: list[str], snr_db: float | None = None, wake: bool = True
) -> dict[str, Any]:
    rows = commands()
    outcomes = []
    for index, (text, intent, _) in enumerate(rows):
        voice = voices[index % len(voices)]
        outcome = replay(config, text, voice, 150 + 30 * (index % 2), index, snr_db, wake)
        outcome["expected"] = intent
        outcomes.append(outcome)
    latencies = [o["latency_ms"] for o in outcomes if "latency_ms" in o]
    understood = [o["latency_ms"] for o in outcomes if o["intent"] == o["expected"]]
    frame_ns = [t for o in outcomes for t in o["frame_ns"]]
    cpu = sum(frame_ns) / 1e9 / sum(o["audio_seconds"] for o in outcomes)
    second = [o["second_hearing_ms"] for o in outcomes if o.get("second_hearing_ms") is not None]
    again = [o["own_mean_ms"] for o in outcomes if o.get("own_mean_ms") is not None]
    replies = [o["reply_ms"] for o in outcomes if "reply_ms" in o]
    return {
        "utterances": len(outcomes),
        "intent_accuracy": round(
            sum(o["intent"] == o["expected"] for o in outcomes) / len(outcomes), 4
        ),
        # every intent event, "not understood" included
        "latency": _latency(latencies),
        # the commands that came out right
        "latency_understood": _latency(understood),
        "real_time_factor": round(cpu, 4),
        "frame": stats_ms(frame_ns),
        "early_endpoints": sum(o.get("reason") == "early_endpoint" for o in outcomes),
        # device actions in a loud room searched again the other way, and what it cost
        "second_hearings": len(second),
        "second_hearing": _latency(second),
        # utterances the streaming search did not trust, searched again from their own mean
        "own_mean_searches": len(again),
        "own_mean_search": _latency(again),
        # end of speech -> a reply may begin (the follow-on window passed)
        "reply_may_begin": _latency(replies),
    }


def _latency(values_ms: list[float]) -> dict[str, float]:
    return stats_ms([round(v * 1e6) for v in values_ms]) if values_ms else {}


def run_llm() -> dict[str, Any]:
    phrasings = lines("help_phrasings.txt")
    rss_before = peak_rss_mb()  # the model lives in a worker process: see worker_rss_mb
    intents = ("HassNevermind", *CARE_INTENTS)
    with tempfile.TemporaryDirectory() as cache:
        # the very first start evaluates the prompt prefix and keeps it in the cache
        started = time.perf_counter()
        first_start = LlmFallback(Config().llm, "en", intents, cache_dir=Path(cache))
        assert first_start.available, "the LLM did not load"
        first_load_ms = (time.perf_counter() - started) * 1000.0
        first_start.close(wait=True)
        started = time.perf_counter()
        fallback = LlmFallback(Config().llm, "en", intents, cache_dir=Path(cache))
        assert fallback.available, "the LLM did not load"
        load_ms = (time.perf_counter() - started) * 1000.0
    cold_start = time.perf_counter()
    first = fallback.classify(phrasings[0], timeout_seconds=60.0)
    cold_ms = (time.perf_counter() - cold_start) * 1000.0
    timings = []
    hits = int(first.intent == "CallForHelp")
    for text in phrasings[1:]:
        start = time.perf_counter_ns()
        result = fallback.classify(text, timeout_seconds=60.0)
        timings.append(time.perf_counter_ns() - start)
        hits += result.intent == "CallForHelp"
    fallback.close(wait=True)
    worker_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    return {
        "first_start_load_ms": round(first_load_ms, 1),
        "load_ms": round(load_ms, 1),
        "first_decision_ms": round(cold_ms, 1),
        "cold_ms": round(load_ms + cold_ms, 1),
        "warm": stats_ms(timings),
        "help_recall": round(hits / len(phrasings), 4),
        "phrasings": len(phrasings),
        "rss_mb": {
            "before": rss_before,
            "after": peak_rss_mb(),
            "worker_peak": round(worker_rss, 1),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", type=int, default=3)
    args = parser.parse_args()
    voices = VOICES[: args.voices]
    base = Config()
    print("commands, early endpointing on ...", file=sys.stderr)
    early = run_commands(base, voices)
    print("commands, early endpointing off ...", file=sys.stderr)
    late = run_commands(
        dataclasses.replace(base, stt=dataclasses.replace(base.stt, early_endpoint_ms=0)), voices
    )
    print("commands in a loud room (10 dB SNR) ...", file=sys.stderr)
    loud = run_commands(base, voices, snr_db=LOUD_SNR_DB)
    print("commands with no wake word before them (continuous) ...", file=sys.stderr)
    cold = run_commands(base, voices, wake=False)
    print("LLM fallback ...", file=sys.stderr)
    llm = run_llm()
    rows = [
        [
            name,
            r["utterances"],
            r["intent_accuracy"],
            r["latency"].get("p50_ms"),
            r["latency"].get("p95_ms"),
            r["latency_understood"].get("p95_ms"),
            r["frame"]["mean_ms"],
            r["frame"]["p99_ms"],
            r["real_time_factor"],
            r["early_endpoints"],
            r["second_hearings"],
            r["second_hearing"].get("p50_ms"),
            r["second_hearing"].get("p95_ms"),
            r["own_mean_searches"],
            r["own_mean_search"].get("p50_ms"),
            r["own_mean_search"].get("p95_ms"),
            r["reply_may_begin"].get("p50_ms"),
        ]
        for name, r in (
            ("early endpoint", early),
            ("silence timeout", late),
            ("loud room, 10 dB", loud),
            ("no wake word", cold),
        )
    ]
    print_table(
        [
            "mode",
            "n",
            "accuracy",
            "p50 ms",
            "p95 ms",
            "p95 right",
            "frame mean",
            "frame p99",
            "RTF",
            "early",
            "2nd",
            "2nd p50",
            "2nd p95",
            "again",
            "again p50",
            "again p95",
            "reply p50",
        ],
        rows,
    )
    print_table(
        ["LLM", "1st start ms", "load ms", "first ms", "warm p50", "warm p95", "recall", "RSS MB"],
        [
            [
                "gemma3-270m",
                llm["first_start_load_ms"],
                llm["load_ms"],
                llm["first_decision_ms"],
                llm["warm"]["p50_ms"],
                llm["warm"]["p95_ms"],
                llm["help_recall"],
                llm["rss_mb"]["worker_peak"],
            ]
        ],
    )
    path = write_results(
        "understanding",
        {
            "voices": voices,
            "early_endpoint": early,
            "silence_timeout": late,
            "loud_room": loud,
            "no_wake_word": cold,
            "llm": llm,
            "targets": TARGETS,
            "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
