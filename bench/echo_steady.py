"""Echo cancellation reply after reply in one room (tests/room.py), as the stage keeps
its filter: twelve replies with a person talking over each (flite slt, "turn on the
kitchen light", 1 s in, 6 dB below the echo; noise 30 dB below the reply), then a reply
alone. How much of the echo each engine takes out while the person talks, and in the
reply alone after (its first second, the next, the rest): does double talk spoil the
filter, and is the 25 dB target met within a reply's first second once the room is
learnt.

    taskset -c 1 ~/.cache/pocket-satellite/venv/bin/python -m bench.echo_steady \
        [--engines speex,mdf]

Writes bench/results/echo_steady.json and prints a table per engine x room.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bench.common import print_table, write_results
from bench.echo import MDF_KALMAN, canceller_for
from bench.echo_words import EARLIER, REPLY, REPLY_LEVEL_DB
from satellite.frontend.echo import echo_return_loss_enhancement
from tests import corpus
from tests.room import Float, Room, Speaking, level_db, scale_to

RATE = 16000
ROOMS = (Room(20, 0.2), Room(100, 0.4), Room(200, 0.6))
TALKED_OVER = 12


def _erle(echo: Float, left: Float) -> float:
    return round(echo_return_loss_enhancement(echo, left), 1)


def measure(engine: str, room: Room, reply: Float, earlier: Float, person: Float) -> dict[str, Any]:
    canceller, late = canceller_for(engine)
    speaking = Speaking(room, canceller.process, late=late)
    speaking.reply(earlier)
    while_talking = []
    started = time.process_time()
    for _ in range(TALKED_OVER):
        said = speaking.reply(reply, person, RATE)
        span = slice(said.start, said.end)
        echo = said.mic - said.alone
        while_talking.append(_erle(echo[span], (said.cancelled - said.alone)[span]))
    cpu_seconds = time.process_time() - started
    alone = speaking.reply(reply)
    echo, left = alone.mic - alone.alone, alone.cancelled - alone.alone
    canceller.close()
    frames = TALKED_OVER * (len(reply) + RATE // 2) // 160
    return {
        "engine": engine,
        "delay_ms": room.delay_ms,
        "rt60_s": room.rt60_seconds,
        "talking_erle_db": while_talking,
        "talking_erle_min_db": min(while_talking),
        "talking_erle_median_db": float(np.median(while_talking)),
        "alone_after_0_1s_db": _erle(echo[:RATE], left[:RATE]),
        "alone_after_1_2s_db": _erle(echo[RATE : 2 * RATE], left[RATE : 2 * RATE]),
        "alone_after_rest_db": _erle(echo[2 * RATE :], left[2 * RATE :]),
        "cpu_ms_per_frame_with_room": round(cpu_seconds / frames * 1000, 3),  # + simulation
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--engines", default="speex,mdf", help=f"comma-separated; also {MDF_KALMAN}"
    )
    engines = parser.parse_args().engines.split(",")
    satellite = corpus.Voice("espeak", "en-us", 160)
    reply = scale_to(corpus.speak(satellite, REPLY).astype(np.float64), REPLY_LEVEL_DB)
    earlier = scale_to(corpus.speak(satellite, EARLIER).astype(np.float64), REPLY_LEVEL_DB)
    said = corpus.speak(corpus.Voice("flite", "slt", 1.0), "turn on the kitchen light")
    person = scale_to(said.astype(np.float64), level_db(reply) - 6)
    rows = [measure(e, room, reply, earlier, person) for room in ROOMS for e in engines]
    write_results("echo_steady", {"talked_over": TALKED_OVER, "shared_machine": True, "rows": rows})
    keys = [k for k in rows[0] if k != "talking_erle_db"]
    print_table(keys, [[row[k] for k in keys] for row in rows])


if __name__ == "__main__":
    main()
