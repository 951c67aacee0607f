"""A person's commands said over the satellite's reply (issue 19: "the person's speech
during the reply is kept"), heard by the satellite's own recognizer (a continuous
pipeline: VAD, the command grammar, the templates), three ways: the person alone (no
reply playing), over the reply's echo with speex echo cancellation, and over it without.

Each room (tests/room.py: delay 20/100/200 ms, RT60 0.2-0.6 s) has one speex canceller
that has heard one earlier reply (the stage keeps its filter between replies) and then
keeps learning through every trial; the reply is the satellite's own voice (eSpeak NG
en-us), its echo 6 dB louder than the person, white noise 30 dB below it. The person
starts 1.0 s into the reply. Word accuracy = 1 - WER of the transcript against the
command; intent right = the first hearing's intent and slots. Each condition has its
own recognizer (its cepstral mean carries over from one hearing to the next).

    taskset -c 1 ~/.cache/pocket-satellite/venv/bin/python -m bench.echo_words \
        [--every N] [--all-rooms]

Writes bench/results/echo_words.json and prints a table per voice family x room.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bench.common import print_table, write_results
from satellite.config import Config
from satellite.frontend.echo_engines import SpeexEchoCanceller
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
CONDITIONS = ("alone", "cancelled", "uncancelled")


def _summary(hearings: list[Hearing]) -> dict[str, Any]:
    errors = sum(h.errors for h in hearings)
    total = sum(h.reference_words for h in hearings)
    return {
        "n": len(hearings),
        "word_accuracy": round(1 - errors / total, 4),
        "intent_right": round(sum(h.intent_right for h in hearings) / len(hearings), 4),
        "asked_again": round(sum(h.asked_again for h in hearings) / len(hearings), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=4, help="every Nth command (1: all)")
    parser.add_argument("--all-rooms", action="store_true", help="9 rooms, not 3")
    args = parser.parse_args()
    config = Config()
    # one recognizer per condition: its cepstral mean carries from one hearing to the
    # next, and should carry only over audio of the same kind
    listeners = {condition: robustness.listener(config) for condition in CONDITIONS}
    satellite = corpus.Voice("espeak", "en-us", 160)
    reply = scale_to(corpus.speak(satellite, REPLY).astype(np.float64), REPLY_LEVEL_DB)
    earlier = scale_to(corpus.speak(satellite, EARLIER).astype(np.float64), REPLY_LEVEL_DB)
    chosen = commands()[:: args.every]
    voices = corpus.available(corpus.VOICES_CI)
    rooms = ROOMS_ALL if args.all_rooms else ROOMS_DIAGONAL
    rows: list[dict[str, Any]] = []
    trials: list[dict[str, Any]] = []
    started = time.process_time()
    for room in rooms:
        canceller = SpeexEchoCanceller()
        speaking = Speaking(room, canceller.process, seed=round(room.delay_ms))
        speaking.reply(earlier)  # it has heard the room before
        for voice in voices:
            heard: dict[str, list[Hearing]] = {c: [] for c in CONDITIONS}
            for text, intent, slots in chosen:
                person = scale_to(corpus.speak(voice, text).astype(np.float64), level_db(reply) - 6)
                said = speaking.reply(reply, person, int(AT_SECONDS * RATE))
                floor: Float = said.alone[: int(0.1 * RATE)]
                floor = np.tile(floor, 20)  # the room's noise alone, 2 s
                audio = {"alone": said.alone, "cancelled": said.cancelled, "uncancelled": said.mic}
                for condition in CONDITIONS:
                    hearing = hear(
                        config,
                        listeners[condition],
                        cut(audio[condition], said, floor),
                        text,
                        intent,
                        slots,
                    )
                    heard[condition].append(hearing)
                    trials.append(
                        {
                            "room": f"{room.delay_ms:g}ms/{room.rt60_seconds:g}s",
                            "voice": voice.label,
                            "command": text,
                            "condition": condition,
                            "transcript": hearing.transcript,
                            "word_accuracy": round(hearing.accuracy, 3),
                            "intent_right": hearing.intent_right,
                        }
                    )
            row: dict[str, Any] = {
                "family": voice.family,
                "delay_ms": room.delay_ms,
                "rt60_s": room.rt60_seconds,
            }
            for condition in CONDITIONS:
                row[condition] = _summary(heard[condition])
            row["cancelled_minus_alone_points"] = round(
                100 * (row["cancelled"]["word_accuracy"] - row["alone"]["word_accuracy"]), 1
            )
            rows.append(row)
            print(f"{voice.label} {room}: {row['cancelled_minus_alone_points']} points", flush=True)
        canceller.close()
    write_results(
        "echo_words",
        {
            "commands": len(chosen),
            "reply_seconds": round(len(reply) / RATE, 2),
            "at_seconds": AT_SECONDS,
            "cpu_seconds": round(time.process_time() - started, 1),
            "rows": rows,
            "trials": trials,
        },
    )
    headers = ["family", "delay_ms", "rt60_s"]
    for condition in CONDITIONS:
        headers += [f"{condition} words", f"{condition} intent"]
    headers.append("cancelled-alone pts")
    table = []
    for row in rows:
        cells: list[Any] = [row["family"], row["delay_ms"], row["rt60_s"]]
        for condition in CONDITIONS:
            cells += [row[condition]["word_accuracy"], row[condition]["intent_right"]]
        cells.append(row["cancelled_minus_alone_points"])
        table.append(cells)
    print_table(headers, table)


if __name__ == "__main__":
    main()
