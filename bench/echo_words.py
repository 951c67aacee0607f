"""A person's commands said over the satellite's reply (issue 19: "the person's speech
during the reply is kept"), heard by the satellite's own recognizer (a continuous
pipeline: VAD, the command grammar, the templates): the person alone (no reply
playing), over the reply's echo through each echo canceller (``--engines``: speex, our
mdf), and over it without.

Each room (tests/room.py: delay 20/100/200 ms, RT60 0.2-0.6 s) has one canceller per
engine that has heard one earlier reply (the stage keeps its filter between replies) and then
keeps learning through every trial; the reply is the satellite's own voice (eSpeak NG
en-us), its echo 6 dB louder than the person, white noise 30 dB below it. The person
starts 1.0 s into the reply. Word accuracy = 1 - WER of the transcript against the
command; intent right = the first hearing's intent and slots. Each condition has its
own recognizer (its cepstral mean carries over from one hearing to the next).

    taskset -c 1 ~/.cache/pocket-satellite/venv/bin/python -m bench.echo_words \
        [--every N] [--all-rooms] [--engines speex,mdf,mdf-residual] [--skip-uncancelled]
        [--mean-from live|speech] [--loop] [--rt60 0.4] [--families espeak,flite]

``--loop``: each engine also as ``<engine>-loop``, the commands heard through the real
frame loop while the satellite speaks (bench/echo_words_loop.py).

Writes bench/results/echo_words.json (``--name``) and prints a table per voice family x
room.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bench.common import print_table, write_results
from bench.echo import MDF_KALMAN, canceller_for
from bench.echo_words_loop import LoopRoom
from satellite.config import Config
from satellite.frontend.echo_engines import (
    EchoCanceller,
)
from satellite.frontend.echo_mdf import MdfEchoCanceller
from satellite.stt.cepstral_mean import RecentSpeech
from satellite.stt.sphinx import PocketSphinxRecognizer
from tests import corpus, robustness
from tests.echo_words import Hearing, cut, hear
from tests.room import Float, Room, Speaking, level_db, scale_to
from tests.understand import commands

RATE = 16000
ROOMS_DIAGONAL = (Room(20, 0.2), Room(100, 0.4), Room(200, 0.6))
ROOMS_ALL = tuple(Room(d, r) for r in (0.2, 0.4, 0.6) for d in (20, 100, 200))
REPLY_LEVEL_DB = 20 * np.log10(3000.0)
EARLIER = "Turned off the bedroom lamp. The timer for ten minutes has started."
REPLY = (
    "The weather today is sunny with a high of eighteen degrees, and it will stay dry "
    "until the evening. You have two reminders: take your tablets at six."
)
#: The person starts this long into the reply, s.
AT_SECONDS = 1.0
#: Not a config engine: our mdf with its residual echo suppressor (20 dB).
MDF_RESIDUAL = "mdf-residual"


def _canceller(engine: str) -> tuple[EchoCanceller, int]:
    """The canceller ``--engines`` names and how late its output comes, samples."""
    if engine == MDF_RESIDUAL:
        mdf = MdfEchoCanceller(residual_suppression_db=20.0)
        return mdf, mdf.output_delay_samples
    return canceller_for(engine)


def _summary(hearings: list[Hearing]) -> dict[str, Any]:
    errors = sum(h.errors for h in hearings)
    total = sum(h.reference_words for h in hearings)
    return {
        "n": len(hearings),
        "word_accuracy": round(1 - errors / total, 4),
        "intent_right": round(sum(h.intent_right for h in hearings) / len(hearings), 4),
        "asked_again": round(sum(h.asked_again for h in hearings) / len(hearings), 4),
    }


def _trial(room: Room, voice: str, text: str, condition: str, hearing: Hearing) -> dict[str, Any]:
    return {
        "room": f"{room.delay_ms:g}ms/{room.rt60_seconds:g}s",
        "voice": voice,
        "command": text,
        "condition": condition,
        "transcript": hearing.transcript,
        "word_accuracy": round(hearing.accuracy, 3),
        "intent_right": hearing.intent_right,
    }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=4, help="every Nth command (1: all)")
    parser.add_argument("--all-rooms", action="store_true", help="9 rooms, not 3")
    parser.add_argument(
        "--engines",
        default="speex,mdf",
        help=f"comma-separated; {MDF_RESIDUAL}: mdf with its suppressor; {MDF_KALMAN}; a "
        "tail after a colon (mdf:700): frontend.echo.tail_ms",
    )
    parser.add_argument(
        "--skip-uncancelled", action="store_true", help="not the raw microphone (saves 1/4)"
    )
    parser.add_argument(
        "--mean-from",
        choices=("live", "speech"),
        default="live",
        help="where a search starts its cepstral mean: live normalisation (the default) "
        "or the last speech heard (RecentSpeech)",
    )
    parser.add_argument(
        "--loop", action="store_true", help="each engine also through the real loop (-loop)"
    )
    parser.add_argument("--rt60", type=float, nargs="+", default=None, help="only these rooms")
    parser.add_argument("--families", default=None, help="comma-separated voice families")
    parser.add_argument("--name", default="echo_words", help="bench/results/<name>.json")
    return parser.parse_args()


def _print(
    rows: list[dict[str, Any]], conditions: tuple[str, ...], engines: tuple[str, ...]
) -> None:
    headers = ["family", "delay_ms", "rt60_s"]
    for condition in conditions:
        headers += [f"{condition} words", f"{condition} intent"]
    headers += [f"{e}-alone pts" for e in engines]
    table = []
    for row in rows:
        cells: list[Any] = [row["family"], row["delay_ms"], row["rt60_s"]]
        for condition in conditions:
            cells += [row[condition]["word_accuracy"], row[condition]["intent_right"]]
        cells += [row[f"{e}_minus_alone_points"] for e in engines]
        table.append(cells)
    print_table(headers, table)


def main() -> None:
    args = _arguments()
    engines = args.engines.split(",")
    loops = [f"{e}-loop" for e in engines] if args.loop else []
    uncancelled = () if args.skip_uncancelled else ("uncancelled",)
    conditions = ("alone", *engines, *uncancelled)
    config = Config()
    # one recognizer per condition: its cepstral mean carries from one hearing to the
    # next, and should carry only over audio of the same kind
    listeners = {condition: robustness.listener(config) for condition in conditions}
    for listener in listeners.values():
        if args.mean_from == "speech" and isinstance(listener.recognizer, PocketSphinxRecognizer):
            listener.recognizer.recent_speech = RecentSpeech()
    satellite = corpus.Voice("espeak", "en-us", 160)
    reply = scale_to(corpus.speak(satellite, REPLY).astype(np.float64), REPLY_LEVEL_DB)
    earlier = scale_to(corpus.speak(satellite, EARLIER).astype(np.float64), REPLY_LEVEL_DB)
    chosen = commands()[:: args.every]
    voices = corpus.available(corpus.VOICES_CI)
    if args.families:
        voices = [v for v in voices if v.family in args.families.split(",")]
    rooms = ROOMS_ALL if args.all_rooms else ROOMS_DIAGONAL
    if args.rt60:
        rooms = tuple(r for r in rooms if r.rt60_seconds in args.rt60)
    rows: list[dict[str, Any]] = []
    trials: list[dict[str, Any]] = []
    started = time.process_time()
    for room in rooms:
        cancellers = {engine: _canceller(engine) for engine in engines}
        speakings = {
            engine: Speaking(
                room,
                canceller.process,
                late=late,
                seed=round(room.delay_ms),  # the same noise for every engine
            )
            for engine, (canceller, late) in cancellers.items()
        }
        for speaking in speakings.values():
            speaking.reply(earlier)  # it has heard the room before
        in_loop = {f"{e}-loop": LoopRoom(e, room, earlier) for e in engines} if loops else {}
        for voice in voices:
            heard: dict[str, list[Hearing]] = {c: [] for c in (*conditions, *loops)}
            for text, intent, slots in chosen:
                person = scale_to(corpus.speak(voice, text).astype(np.float64), level_db(reply) - 6)
                at = int(AT_SECONDS * RATE)
                saids = {e: sp.reply(reply, person, at) for e, sp in speakings.items()}
                said = saids[engines[0]]
                floor: Float = said.alone[: int(0.1 * RATE)]
                floor = np.tile(floor, 20)  # the room's noise alone, 2 s
                audio = {"alone": said.alone, "uncancelled": said.mic}
                audio.update({e: saids[e].cancelled for e in engines})
                for condition in conditions:
                    hearing = hear(
                        config,
                        listeners[condition],
                        cut(audio[condition], said, floor),
                        text,
                        intent,
                        slots,
                    )
                    heard[condition].append(hearing)
                    trials.append(_trial(room, voice.label, text, condition, hearing))
                for condition, loop in in_loop.items():
                    hearing = loop.hear(reply, person, AT_SECONDS, text, intent, slots)
                    heard[condition].append(hearing)
                    trials.append(_trial(room, voice.label, text, condition, hearing))
            row: dict[str, Any] = {
                "family": voice.family,
                "delay_ms": room.delay_ms,
                "rt60_s": room.rt60_seconds,
            }
            for condition in (*conditions, *loops):
                row[condition] = _summary(heard[condition])
            for engine in (*engines, *loops):
                row[f"{engine}_minus_alone_points"] = round(
                    100 * (row[engine]["word_accuracy"] - row["alone"]["word_accuracy"]), 1
                )
            rows.append(row)
            points = {e: row[f"{e}_minus_alone_points"] for e in (*engines, *loops)}
            print(f"{voice.label} {room}: {points} points", flush=True)
        for canceller, _ in cancellers.values():
            canceller.close()
    write_results(
        args.name,
        {
            "commands": len(chosen),
            "reply_seconds": round(len(reply) / RATE, 2),
            "at_seconds": AT_SECONDS,
            "engines": engines,
            "loop": args.loop,
            "mean_from": args.mean_from,
            "shared_machine": True,
            "cpu_seconds": round(time.process_time() - started, 1),
            "rows": rows,
            "trials": trials,
        },
    )
    _print(rows, (*conditions, *loops), (*engines, *loops))


if __name__ == "__main__":
    main()
