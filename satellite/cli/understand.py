"""``pocket-satellite understand``: one JSON object per utterance in a file."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..audio.io import open_source
from ..config import Config, load
from ..events import Event, UtteranceEnded
from ..pipeline import build_pipeline
from ..understanding import Understanding, UtteranceReport, build_understanding

#: How long to wait for a fallback (open transcription + LLM) result per utterance, s.
FALLBACK_WAIT_SECONDS = 30.0


def add_parser(sub: Any) -> None:
    """Register the ``understand`` subcommand."""
    parser = sub.add_parser(
        "understand",
        help="transcribe and understand every utterance in a recording (no wake word needed)",
    )
    parser.add_argument("--input", required=True, help="FILE.wav, alsa:DEVICE or -")
    parser.add_argument("--config", type=Path, default=None, help="YAML configuration file")
    parser.add_argument("--no-llm", action="store_true", help="skip the LLM fallback")
    parser.set_defaults(func=run)


def report_dict(report: UtteranceReport) -> dict[str, Any]:
    """The JSON object printed for one utterance."""
    stt = report.stt
    intent = report.intent
    return {
        "utterance_id": report.utterance_id,
        "start_seconds": report.start_seconds,
        "end_seconds": report.end_seconds,
        "end_reason": report.reason,
        "transcript": stt.text if stt else "",
        "in_grammar": bool(stt and stt.in_grammar),
        "score_per_frame": stt.score_per_frame if stt else None,
        "words": [
            {
                "word": w.word,
                "start_seconds": w.start_seconds,
                "end_seconds": w.end_seconds,
                "score": w.score,
            }
            for w in (stt.words if stt else ())
        ],
        # in a loud room, a device action heard the other way (raw or denoised) too
        "heard_other_way": report.second_hearing.text if report.second_hearing else None,
        # the streaming search not trusted: the utterance searched again from its own mean
        "heard_again": report.own_mean.text if report.own_mean else None,
        "intent": intent.intent if intent else None,
        "slots": dict(intent.slots) if intent else {},
        "confidence": intent.confidence if intent else 0.0,
        "source": intent.source if intent else None,
        "timings_ms": report.timings_ms,
    }


def run(args: argparse.Namespace) -> int:
    """Replay the input through the front end and understanding; print each utterance."""
    config = load(args.config) if args.config else Config()
    config.logging.apply()
    source = open_source(args.input, queue_ms=config.audio.queue_ms)  # a bad input: at once
    print(f"loading models for {config.satellite.language} ...", file=sys.stderr)
    understanding = build_understanding(config, use_llm=not args.no_llm)
    pipeline = build_pipeline(config, continuous=True, understanding=understanding)
    try:
        for chunk in source:
            _print_ended(understanding, pipeline.process(chunk))
    finally:
        source.close()
    _print_ended(understanding, pipeline.end_of_input())
    return 0


def _print_ended(understanding: Understanding, events: list[Event]) -> None:
    for event in events:
        if isinstance(event, UtteranceEnded):
            _print_when_done(understanding, event)


def _print_when_done(understanding: Understanding, utterance: UtteranceEnded) -> None:
    started = time.perf_counter()
    understanding.poll(utterance.timestamp_seconds, wait_seconds=FALLBACK_WAIT_SECONDS)
    report = understanding.reports.get(utterance.utterance_id)
    if report is None:
        return
    report.timings_ms.setdefault(
        "wait_fallback", round((time.perf_counter() - started) * 1000.0, 2)
    )
    print(json.dumps(report_dict(report)), flush=True)
