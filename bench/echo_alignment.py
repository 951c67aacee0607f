"""Echo cancellation through a sound card's timing (issue 19): the reply as `run` writes
it (the player's 20 ms writes through the echo tap into the ALSA sink's queue and ring,
tests/sound_card.py), the microphone's frames and the writes' returns reaching the echo
stage in system-time order, on crystals that are not the system clock's.

Cases: one card for microphone and speaker (one crystal, 0 or +-100 ppm off the system
clock) after 10 s, 1 h and 6 h of uptime; two cards (the speaker's crystal 5-50 ppm off
the microphone's). The echo taken out (ERLE, dB) of a new filter over 1-2 s, 2-4 s and
4 s to the end of a 7.6 s reply, in rooms of RT60 0.3 and 0.6 s.

    taskset -c 0 ~/.cache/pocket-satellite/venv/bin/python -m bench.echo_alignment \
        [--engines speex,mdf] [--latency-ms 0] [--name echo_alignment]

Writes bench/results/<name>.json and prints a table.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import soxr

from bench.common import print_table, write_results
from satellite.frontend.echo import echo_return_loss_enhancement
from satellite.frontend.echo_engines import make_echo_canceller
from tests import synth
from tests.room import Room, scale_to
from tests.sound_card import Crystals, cancel_through_the_card

RATE = 16000
OUTPUT_HZ = 22050
REPLY = (
    "The kitchen light is on. It is twenty past four, and the weather is fine today. "
    "Your next appointment is on Tuesday at ten in the morning."
)
#: (label, speaker ppm, microphone ppm, uptime s)
CASES = (
    ("one card", 0.0, 0.0, 10.0),
    ("one card", 0.0, 0.0, 3600.0),
    ("one card", 100.0, 100.0, 3600.0),
    ("one card", -100.0, -100.0, 3600.0),
    ("one card", -100.0, -100.0, 6 * 3600.0),
    ("two cards", 0.0, 5.0, 600.0),
    ("two cards", 0.0, 10.0, 600.0),
    ("two cards", 0.0, 20.0, 600.0),
    ("two cards", 0.0, 50.0, 600.0),
    ("two cards", 50.0, 0.0, 600.0),
)
RT60S = (0.3, 0.6)
SPANS = ((1.0, 2.0), (2.0, 4.0), (4.0, None))


def measure(engine: str, latency_ms: float) -> list[dict[str, Any]]:
    reply16 = synth.espeak(REPLY, "en-us", 160).astype(np.float64)
    reply16 = scale_to(reply16, 20 * np.log10(3000))
    reply = soxr.resample(reply16 / 32768, RATE, OUTPUT_HZ) * 32768
    rows = []
    for label, speaker_ppm, mic_ppm, uptime in CASES:
        for rt60 in RT60S:
            crystals = Crystals(speaker_ppm=speaker_ppm, mic_ppm=mic_ppm)
            echo, out = cancel_through_the_card(
                make_echo_canceller(engine),
                reply,
                OUTPUT_HZ,
                crystals,
                Room(delay_ms=1, rt60_seconds=rt60),
                uptime,
                latency_seconds=latency_ms / 1000,
            )
            erle = []
            for lo, hi in SPANS:
                span = slice(int(lo * RATE), None if hi is None else int(hi * RATE))
                erle.append(round(echo_return_loss_enhancement(echo[span], out[span]), 1))
            rows.append(
                {
                    "engine": engine,
                    "case": label,
                    "speaker_ppm": speaker_ppm,
                    "mic_ppm": mic_ppm,
                    "uptime_s": uptime,
                    "rt60_s": rt60,
                    "erle_1_2s_db": erle[0],
                    "erle_2_4s_db": erle[1],
                    "erle_4s_end_db": erle[2],
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="speex,mdf")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="frontend.echo.latency_ms")
    parser.add_argument("--name", default="echo_alignment")
    args = parser.parse_args()
    rows = [row for engine in args.engines.split(",") for row in measure(engine, args.latency_ms)]
    path = write_results(args.name, {"latency_ms": args.latency_ms, "rows": rows})
    keys = list(rows[0])
    print_table(keys, [[row[k] for k in keys] for row in rows])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
