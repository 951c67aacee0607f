"""Hearing "stop" over the satellite's own voice (issue 19, item 2) on a simulated room.

In each room (tests/room.py: delay 20-200 ms, RT60 0.2-0.6 s) one echo canceller
(``--engine``, speex unless told) hears, in turn, the satellite's replies (eSpeak NG
en-us, its own voice) with nobody talking over them, then the same replies with a person
saying a stop word over each, 6 dB below the reply's echo, with white noise 30 dB below
it. The stop-word check
(satellite/stt/keywords.py) runs while each reply plays, on the echo-cancelled audio.
Counted: replies the satellite stopped by itself, stop words heard, and how long after
the end of the word each was heard; the cost per 10 ms frame while speaking (CPU time of
the thread, so a shared core's waits are not counted).

    taskset -c 1 ~/.cache/pocket-satellite/venv/bin/python -m bench.duplex [--quick] \
        [--engine speex|mdf|webrtc|mdf-gate|mdf-kalman[:TAIL_MS]]

Writes bench/results/duplex.json (duplex_<engine>.json for another engine than speex)
and prints a table per voice family and room.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.common import peak_rss_mb, print_table, write_results
from bench.echo import canceller_for
from satellite.audio.chunk import AudioChunk
from satellite.frontend.echo_settings import EchoSettings
from satellite.stt.keywords import (
    KWS_THRESHOLD,
    RING_ALLOWANCE_DB,
    STOP_HEADROOM_DB,
    StopWordSpotter,
)
from tests import corpus
from tests.room import Float, Room, level_db, scale_to

RATE = 16000
FRAME = 160
DELAYS_MS = (20, 100, 200)
RT60S = (0.2, 0.4, 0.6)
#: The satellite's replies, short to long (its own voice: eSpeak NG en-us).
REPLIES = (
    "Good night.",
    "The kitchen light is on.",
    "Turned off the bedroom lamp.",
    "It is twenty past four in the afternoon.",
    "The timer for ten minutes has started.",
    "Turned on the lights in the living room.",
    "Sorry, I did not catch that. Could you say it again?",
    "I have called the nurse, someone is coming to help you now.",
    "Your next appointment is on Tuesday at ten in the morning with doctor Smith.",
    "The weather today is sunny with a high of eighteen degrees, and it will stay dry "
    "until the evening.",
    "You have two reminders: take your tablets at six, and call your daughter after dinner.",
    "The front door is locked and the hall light is off.",
    # its own stop words: heard over the reply as echo, they must not stop it
    "I have cancelled the timer.",
    "Say stop, or be quiet, whenever you want me to stop talking.",
)
SATELLITE_VOICE = corpus.Voice("espeak", "en-us", 160)
#: People: every test voice but the satellite's own.
PEOPLE = tuple(v for v in corpus.VOICES_ALL if v != SATELLITE_VOICE)
REPLY_LEVEL_DB = 20 * np.log10(3000.0)
#: Gap between replies, s.
GAP_SECONDS = 0.5


@dataclass
class Trial:
    """What one reply through the room gave."""

    stopped_at: float | None  # s into the reply's audio, when the check fired
    word_end: float | None  # s, the end of the person's word
    word_start: float | None


def _int16(x: Float) -> np.ndarray:
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def _chunk(samples: np.ndarray, at: float) -> AudioChunk:
    return AudioChunk(RATE, 2, 1, samples.astype("<i2").tobytes(), at)


class RoomRun:
    """One room: its canceller and the stop-word check, reply after reply."""

    def __init__(
        self, room: Room, spotter: StopWordSpotter, seed: int, engine: str = "speex"
    ) -> None:
        self.room = room
        self.spotter = spotter
        self.canceller = canceller_for(engine)[0]
        self.rng = np.random.default_rng(seed)
        self.clock = 0.0
        self.check_ns: list[int] = []
        self.cancel_ns: list[int] = []

    def reply(self, reply: Float, person: Float | None = None) -> Trial:
        gap = np.zeros(int(GAP_SECONDS * RATE))
        played = np.concatenate([reply, gap])
        echo = self.room.echo(played)
        noise = self.rng.standard_normal(len(played)) * 10 ** ((REPLY_LEVEL_DB - 30) / 20)
        mic = echo + noise
        start = end = None
        if person is not None:
            voice = scale_to(person, level_db(reply) - 6)  # the echo 6 dB louder
            room_for = len(reply) - len(voice) - int(0.2 * RATE)
            at = int(self.rng.integers(int(0.3 * RATE), max(int(0.3 * RATE) + 1, room_for)))
            mic[at : at + len(voice)] += voice[: len(mic) - at]
            start, end = at / RATE, (at + len(voice)) / RATE
        shift = int(self.room.delay_ms * RATE / 1000) - 40  # the tap's reference, 2.5 ms early
        far = _int16(np.concatenate([np.zeros(shift), played])[: len(played)])
        mic16 = _int16(mic)
        self.spotter.start()
        stopped: float | None = None
        speaking_frames = len(reply) // FRAME + int(0.3 * RATE) // FRAME  # + the tail
        for index in range(len(played) // FRAME):
            piece = slice(index * FRAME, (index + 1) * FRAME)
            t0 = time.thread_time_ns()
            out = self.canceller.process(mic16[piece], far[piece])
            t1 = time.thread_time_ns()
            when = self.clock + index * FRAME / RATE
            if index == speaking_frames:
                self.spotter.stop()
            heard = self.spotter.process(_chunk(mic16[piece], when), _chunk(out, when))
            if self.spotter.active:
                self.check_ns.append(time.thread_time_ns() - t1)
                self.cancel_ns.append(t1 - t0)
            if heard is not None and stopped is None:
                stopped = (index + 1) * FRAME / RATE
                self.spotter.stop()  # the reply stops: the check with it
        self.spotter.stop()
        self.clock += len(played) / RATE
        return Trial(stopped, end, start)


def _row(label: dict[str, Any], trials: list[Trial]) -> dict[str, Any]:
    heard = [t for t in trials if t.stopped_at is not None and t.word_start is not None]
    heard = [t for t in heard if t.stopped_at is not None and t.stopped_at > t.word_start]  # type: ignore[operator]
    late = [1000 * (t.stopped_at - t.word_end) for t in heard]  # type: ignore[operator]
    in_time = [x for x in late if x <= 300]
    return {
        **label,
        "trials": len(trials),
        "heard": len(heard),
        "heard_within_300ms": len(in_time),
        "early_false_stops": sum(1 for t in trials if t.stopped_at is not None and t not in heard),
        "latency_p50_ms": round(float(np.percentile(late, 50)), 0) if late else None,
        "latency_p95_ms": round(float(np.percentile(late, 95)), 0) if late else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="two rooms, four voices")
    parser.add_argument("--words", nargs="+", default=["stop", "cancel"])
    parser.add_argument("--threshold", type=float, default=KWS_THRESHOLD)
    parser.add_argument("--margin-db", type=float, default=None)
    parser.add_argument(
        "--headroom-db",
        type=float,
        default=STOP_HEADROOM_DB,
        help="the learnt margin's headroom over the own voice (-99: a fixed margin)",
    )
    parser.add_argument(
        "--ring-allowance-db",
        type=float,
        default=RING_ALLOWANCE_DB,
        help="how far the microphone may fall before the gate calls it ringing (99: off)",
    )
    parser.add_argument("--name", default=None, help="results file name (default duplex)")
    parser.add_argument(
        "--engine",
        default="speex",
        help="echo canceller: speex, mdf, webrtc, mdf-gate (mdf with "
        "frontend.echo.residual_gate), mdf-kalman; a tail after a colon (mdf:600): "
        "frontend.echo.tail_ms",
    )
    args = parser.parse_args()
    settings = EchoSettings()
    started = time.perf_counter()
    margin_db = settings.stop_margin_db if args.margin_db is None else args.margin_db
    spotter = StopWordSpotter(
        settings.stop_words,
        margin_db,
        threshold=args.threshold,
        headroom_db=args.headroom_db,
        ring_allowance_db=args.ring_allowance_db,
    )
    load_seconds = time.perf_counter() - started
    replies = [
        scale_to(corpus.speak(SATELLITE_VOICE, text).astype(np.float64), REPLY_LEVEL_DB)
        for text in REPLIES
    ]
    rooms = [
        Room(d, r, seed=i) for i, (r, d) in enumerate((r, d) for r in RT60S for d in DELAYS_MS)
    ]
    people = corpus.available(PEOPLE)
    if args.quick:
        rooms, people = rooms[::4], people[::2]
    self_rows: list[dict[str, Any]] = []
    stop_rows: list[dict[str, Any]] = []
    check_ns: list[int] = []
    cancel_ns: list[int] = []
    cpu0 = time.process_time()
    for number, room in enumerate(rooms):
        spotter.reset()  # a new room: a new canceller and gate, as at start-up
        run = RoomRun(room, spotter, seed=number, engine=args.engine)
        label = {"delay_ms": room.delay_ms, "rt60_s": room.rt60_seconds}
        own = [run.reply(reply) for reply in replies]
        self_rows.append(
            {
                **label,
                "replies": len(own),
                "self_stops": sum(t.stopped_at is not None for t in own),
                "first_reply_self_stop": own[0].stopped_at is not None,
                "margin_db": round(spotter.margin.now_db, 1),
            }
        )
        for family in corpus.FAMILIES:
            trials = []
            for voice in (v for v in people if v.family == family):
                for word in args.words:
                    said = corpus.speak(voice, word).astype(np.float64)
                    reply = replies[int(run.rng.integers(3, len(replies)))]
                    trials.append(run.reply(reply, said))
            if trials:
                stop_rows.append(_row({**label, "family": family}, trials))
        check_ns += run.check_ns
        cancel_ns += run.cancel_ns
        print(f"room {number + 1}/{len(rooms)} done", flush=True)
    cpu_seconds = time.process_time() - cpu0
    trials_total = sum(r["trials"] for r in stop_rows)
    summary = {
        "replies_without_a_person": sum(r["replies"] for r in self_rows),
        "self_stops": sum(r["self_stops"] for r in self_rows),
        "stop_trials": trials_total,
        "heard_within_300ms": sum(r["heard_within_300ms"] for r in stop_rows),
        "heard_within_300ms_percent": round(
            100 * sum(r["heard_within_300ms"] for r in stop_rows) / max(1, trials_total), 1
        ),
        "heard_at_all": sum(r["heard"] for r in stop_rows),
        "early_false_stops": sum(r["early_false_stops"] for r in stop_rows),
        "words_spotted": spotter.spotted,
        "words_through_the_gate": spotter.passed,
        "check_ms_per_frame_mean": round(float(np.mean(check_ns)) / 1e6, 3),
        "check_ms_per_frame_p95": round(float(np.percentile(check_ns, 95)) / 1e6, 3),
        "canceller_ms_per_frame_mean": round(float(np.mean(cancel_ns)) / 1e6, 3),
        "cpu_seconds": round(cpu_seconds, 1),
        "check_load_seconds": round(load_seconds, 3),
        "peak_rss_mb": peak_rss_mb(),
    }
    name = (args.name or "duplex") + ("_quick" if args.quick else "")
    write_results(
        name if args.engine == "speex" or args.name else f"{name}_{args.engine.replace(':', '_')}",
        {
            "settings": {
                "engine": args.engine,
                "stop_words": list(settings.stop_words),
                "stop_margin_db": margin_db,
                "headroom_db": args.headroom_db,
                "ring_allowance_db": args.ring_allowance_db,
                "kws_threshold": args.threshold,
                "words_said": args.words,
                "people": [v.label for v in people],
            },
            "summary": summary,
            "own_replies": self_rows,
            "stops": stop_rows,
        },
    )
    print_table(list(self_rows[0]), [list(r.values()) for r in self_rows])
    print_table(list(stop_rows[0]), [list(r.values()) for r in stop_rows])
    print_table(["measure", "value"], [[k, v] for k, v in summary.items()])


if __name__ == "__main__":
    main()
