"""Speech over the satellite's own voice pauses it and is heard (issue 19, item 2).

The real frame loop (echo cancellation on, speex; hearing while speaking on; PocketSphinx
and the intent templates, no LLM) in simulated rooms (tests/room.py: delay 20-200 ms,
RT60 0.2-0.6 s), the satellite's replies in its own voice (eSpeak NG en-us), white noise
30 dB below them (tests/duplex_room.py). In each room: the replies alone (the first ones
while the canceller learns the room), counting replies that paused or stopped themselves
and utterances they opened; then every test voice but the satellite's says a command
over a long reply, 6 dB below its echo, from 0.6-2.4 s into it, counting replies paused
(or stopped by the stop-word check) within 300 ms of the person's speech onset (the
player stops 50 ms after the loop asks) and the intent heard. Cost: CPU time of the
thread per 10 ms frame while the satellite speaks, with the talk-over check and without
it (what the loop did before: stop words only).

    taskset -c 1 ~/.cache/pocket-satellite/venv/bin/python -m bench.duplex_talk_over [--quick]
        [--stop-words xylophone]   # the talk-over check alone (no stop word is said)
        [--rt60 0.6]               # only those rooms (each as in the full run)
        [--engine mdf-gate]        # another echo canceller (speex unless told)

Writes bench/results/duplex_talk_over[_gate_only][_rt60_...].json and prints a table per
voice family and room.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.common import peak_rss_mb, print_table, write_results
from bench.duplex import DELAYS_MS, PEOPLE, REPLIES, RT60S
from bench.echo import echo_section
from satellite.actions import AnswerDue, StopSaid
from satellite.audio.chunk import AudioChunk
from satellite.config import Config, validate
from satellite.events import Event, SpeechStarted
from satellite.pipeline import Pipeline
from satellite.stages import build_stages
from satellite.understanding import build_understanding
from tests import corpus
from tests.duplex_room import Replying, Turn, reply_audio
from tests.room import Float, Room

#: Commands a person says over a reply, and the intent each should be heard as.
COMMANDS = (
    ("what time is it", "GetTime"),
    ("what day is it today", "GetDate"),
    ("turn the volume up", "VolumeUp"),
    ("i need help", "CallForHelp"),
    ("say that again", "Repeat"),
)
#: The long replies a person talks over (indexes into REPLIES).
LONG = (8, 9, 10)


@dataclass
class Trial:
    family: str
    paused: bool
    stopped: bool  # by the stop-word check
    latency_ms: float | None  # from the person's onset to the loop asking
    intent_right: bool
    #: Acted on at once (not asked about) and not what was said: a wrong action.
    sure_wrong: bool
    #: Asked about once more (frontend.echo.ask_again_over_reply; or doubtful anyway).
    asked: bool


class TimedPipeline(Pipeline):
    """The pipeline, timing ``process`` (thread CPU time) while the satellite speaks."""

    speaking_ns: list[int]

    def process(self, chunk: AudioChunk) -> list[Event]:
        speaking = self.speaking
        started = time.thread_time_ns()
        events = super().process(chunk)
        if speaking:
            self.speaking_ns.append(time.thread_time_ns() - started)
        return events


def _pipeline(config: Config, talk_over: bool) -> TimedPipeline:
    understanding = build_understanding(config, use_llm=False)
    stages = build_stages(config, understanding=understanding)
    if not talk_over:
        stages.talk_over = None  # as before: stop words only while speaking
    pipeline = TimedPipeline(stages)
    pipeline.speaking_ns = []
    return pipeline


def _trial(family: str, turn: Turn, intent: str) -> Trial:
    assert turn.person is not None
    stopped = any(isinstance(a, StopSaid) for a in turn.actions)
    latency = None
    if turn.stopped_at is not None and turn.stopped_at > turn.person[0]:
        latency = 1000 * (turn.stopped_at - turn.person[0])
    answers = [a for a in turn.actions if isinstance(a, AnswerDue)]
    heard = [a.result.intent for a in answers]
    sure_wrong = any(not a.doubtful and a.result.intent not in (None, intent) for a in answers)
    asked = any(a.doubtful for a in answers)
    return Trial(family, turn.paused, stopped, latency, intent in heard, sure_wrong, asked)


def _row(label: dict[str, Any], trials: list[Trial]) -> dict[str, Any]:
    late = [t.latency_ms for t in trials if t.latency_ms is not None]
    return {
        **label,
        "trials": len(trials),
        "paused_within_300ms": sum(1 for x in late if x <= 300),
        "paused_at_all": len(late),
        "by_stop_word": sum(t.stopped for t in trials),
        "latency_p50_ms": round(float(np.percentile(late, 50))) if late else None,
        "latency_p95_ms": round(float(np.percentile(late, 95))) if late else None,
        "intent_right": sum(t.intent_right for t in trials),
        "acted_on_wrong": sum(t.sure_wrong for t in trials),
        "asked_again": sum(t.asked for t in trials),
    }


def _own(replying: Replying, replies: list[Float]) -> dict[str, int]:
    turns = [replying.reply(r) for r in replies]
    return {
        "replies": len(turns),
        "self_paused": sum(1 for t in turns if t.stopped_at is not None and t.paused),
        "self_stopped": sum(1 for t in turns if t.stopped_at is not None and not t.paused),
        "utterances_opened": sum(
            1 for t in turns if any(isinstance(e, SpeechStarted) for e in t.events)
        ),
    }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="three rooms, four voices")
    parser.add_argument(
        "--stop-words",
        nargs="+",
        default=None,
        help="frontend.echo.stop_words (e.g. xylophone: the talk-over check alone)",
    )
    parser.add_argument(
        "--rt60", type=float, nargs="+", default=None, help="only the rooms of these RT60s, s"
    )
    parser.add_argument(
        "--engine",
        default="speex",
        help="frontend.echo.engine; mdf-kalman: mdf with the Kalman gain, mdf-gate: mdf "
        "with the residual echo gate; a tail after a colon (mdf:700): frontend.echo.tail_ms",
    )
    return parser.parse_args()


def _config(engine: str, stop_words: list[str] | None) -> Config:
    """Echo on with ``engine`` (``mdf-kalman``, ``mdf-gate``: mdf with that option;
    ``mdf:700``: learning a 700 ms tail)."""
    echo = echo_section(engine)
    if stop_words:
        echo["stop_words"] = stop_words
    return validate({"frontend": {"echo": echo}})


def main() -> None:
    args = _arguments()
    config = _config(args.engine, args.stop_words)
    name = "duplex_talk_over" + ("_gate_only" if args.stop_words else "")
    if args.engine != "speex":
        name += "_" + args.engine.replace("-", "_").replace(":", "_")
    if args.rt60:
        name += "_rt60_" + "_".join(f"{r:g}" for r in args.rt60)
    pipeline = _pipeline(config, talk_over=True)
    replies = [reply_audio(text) for text in REPLIES]
    rooms = [
        Room(d, r, seed=i) for i, (r, d) in enumerate((r, d) for r in RT60S for d in DELAYS_MS)
    ]
    people = corpus.available(PEOPLE)
    if args.quick:
        rooms, people = rooms[::4], people[::2]
    if args.rt60:
        rooms = [r for r in rooms if r.rt60_seconds in args.rt60]
    own_rows: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    trials: list[Trial] = []
    cpu0 = time.process_time()
    for number, room in enumerate(rooms):
        replying = Replying(pipeline, room, seed=room.seed)  # the room's, as in the full run
        label = {"delay_ms": room.delay_ms, "rt60_s": room.rt60_seconds}
        own_rows.append({**label, **_own(replying, replies)})
        assert pipeline.stages.talk_over is not None
        label_margin = {"margin_db": round(pipeline.stages.talk_over.margin_now_db, 1)}
        room_trials: list[Trial] = []
        for index, voice in enumerate(people):
            text, intent = COMMANDS[(index + room.seed) % len(COMMANDS)]
            said = corpus.speak(voice, text).astype(np.float64)
            reply = replies[LONG[int(replying.rng.integers(len(LONG)))]]
            at = float(replying.rng.uniform(0.6, 2.4))
            turn = replying.reply(reply, said, at_seconds=at, after_seconds=3.0)
            room_trials.append(_trial(voice.family, turn, intent))
            replying.reply(replies[1])  # the satellite answers: a reply alone between
        for family in corpus.FAMILIES:
            of_family = [t for t in room_trials if t.family == family]
            if of_family:
                rows.append(_row({**label, **label_margin, "family": family}, of_family))
        trials += room_trials
        print(f"room {number + 1}/{len(rooms)} done", flush=True)
    cpu_seconds = time.process_time() - cpu0
    before = _pipeline(config, talk_over=False)
    replying = Replying(before, rooms[0], seed=0)
    _own(replying, replies)
    late = [t.latency_ms for t in trials if t.latency_ms is not None]
    summary = {
        "replies_alone": sum(r["replies"] for r in own_rows),
        "self_paused": sum(r["self_paused"] for r in own_rows),
        "self_stopped": sum(r["self_stopped"] for r in own_rows),
        "utterances_opened_by_own_voice": sum(r["utterances_opened"] for r in own_rows),
        "talk_over_trials": len(trials),
        "paused_within_300ms": sum(1 for x in late if x <= 300),
        "paused_within_300ms_percent": round(
            100 * sum(1 for x in late if x <= 300) / max(1, len(trials)), 1
        ),
        "by_stop_word": sum(t.stopped for t in trials),
        "intent_right": sum(t.intent_right for t in trials),
        "acted_on_wrong": sum(t.sure_wrong for t in trials),
        "asked_again": sum(t.asked for t in trials),
        "frame_ms_while_speaking_mean": _ms(pipeline.speaking_ns, 50, mean=True),
        "frame_ms_while_speaking_p95": _ms(pipeline.speaking_ns, 95),
        "frame_ms_while_speaking_without_talk_over_mean": _ms(before.speaking_ns, 50, mean=True),
        "frame_ms_while_speaking_without_talk_over_p95": _ms(before.speaking_ns, 95),
        "cpu_seconds": round(cpu_seconds, 1),
        "peak_rss_mb": peak_rss_mb(),
    }
    write_results(
        name + ("_quick" if args.quick else ""),
        {
            "settings": {
                "talk_over_margin_db": config.frontend.echo.talk_over_margin_db,
                "stop_margin_db": config.frontend.echo.stop_margin_db,
                "stop_words": list(config.frontend.echo.stop_words),
                "people": [v.label for v in people],
                "commands": [c for c, _ in COMMANDS],
            },
            "summary": summary,
            "own_replies": own_rows,
            "talk_over": rows,
        },
    )
    print_table(list(own_rows[0]), [list(r.values()) for r in own_rows])
    print_table(list(rows[0]), [list(r.values()) for r in rows])
    print_table(["measure", "value"], [[k, v] for k, v in summary.items()])


def _ms(values: list[int], percentile: float, mean: bool = False) -> float:
    if not values:
        return float("nan")
    picked = float(np.mean(values)) if mean else float(np.percentile(values, percentile))
    return round(picked / 1e6, 3)


if __name__ == "__main__":
    main()
