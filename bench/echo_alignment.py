"""Echo cancellation through a sound card's timing (issue 19): replies as `run` writes
them (the player's 20 ms writes through the echo tap into the ALSA sink's queue and
ring, tests/sound_card.py), the microphone's frames and the writes' returns reaching
the echo stage in system-time order, on crystals that are not the system clock's, and a
card that starts 0-``--start-ms`` ms after a reply's first write.

Cases: one card for microphone and speaker (one crystal, 0 or -100 ppm off the system
clock, an hour up); two cards (the microphone's crystal 10-50 ppm off the speaker's).
Nine replies 3 s apart through one stage (its filter carried from reply to reply); the
echo taken out (ERLE, dB) over the first second, 1-2 s and 2 s to the end of replies 4-9
(mean, and the worst first second), the rate learnt and the replies moved to where the
filter had the echo (``satellite/frontend/echo_drift.py``), in rooms of RT60 0.3 and 0.6 s.

    taskset -c 0 ~/.cache/pocket-satellite/venv/bin/python -m bench.echo_alignment \
        [--engines speex,mdf] [--start-ms 2] [--no-align] [--no-rate] [--name N]

Writes bench/results/<name>.json (echo_alignment[_no_align][_no_rate] by default) and
prints a table.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import soxr

from bench.common import print_table, write_results
from satellite.frontend.echo import echo_return_loss_enhancement
from satellite.frontend.echo_engines import make_echo_canceller
from tests import synth
from tests.room import Float, Room, scale_to
from tests.sound_card import Crystals, ThroughTheCard

RATE = 16000
OUTPUT_HZ = 22050
REPLIES = (
    "The kitchen light is on. It is twenty past four, and the weather is fine today. "
    "Your next appointment is on Tuesday at ten in the morning.",
    "Turned off the bedroom lamp. The timer for ten minutes has started.",
    "You have two reminders: take your tablets at six, and call your daughter after dinner.",
)
#: (label, speaker ppm, microphone ppm)
CASES = (
    ("one card", 0.0, 0.0),
    ("one card", -100.0, -100.0),
    ("two cards", 0.0, 10.0),
    ("two cards", 0.0, 30.0),
    ("two cards", 0.0, 50.0),
    ("two cards", 0.0, -50.0),
)
RT60S = (0.3, 0.6)
COUNT = 9
SPANS = ((0.0, 1.0), (1.0, 2.0), (2.0, None))


def _replies() -> list[Float]:
    out = []
    for text in REPLIES:
        said = scale_to(synth.espeak(text, "en-us", 160).astype(np.float64), 20 * np.log10(3000))
        out.append(soxr.resample(said / 32768, RATE, OUTPUT_HZ) * 32768)
    return out


def measure(engine: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    replies = _replies()
    rows = []
    for label, speaker_ppm, mic_ppm in CASES:
        for rt60 in RT60S:
            crystals = Crystals(speaker_ppm, mic_ppm, start_ms=args.start_ms)
            card = ThroughTheCard(make_echo_canceller(engine), OUTPUT_HZ, crystals, Room(1, rt60))
            card.stage.timing.align = not args.no_align
            card.stage.timing.follow_rate = not args.no_rate
            at, taken = 3600.0, []
            cpu = time.thread_time()
            for n in range(COUNT):
                reply = replies[n % len(replies)]
                echo, out = card.reply(reply, at)
                at += len(reply) / OUTPUT_HZ + 3.0
                spans = [
                    slice(int(lo * RATE), None if hi is None else int(hi * RATE))
                    for lo, hi in SPANS
                ]
                taken.append([echo_return_loss_enhancement(echo[s], out[s]) for s in spans])
            later = np.array(taken[3:])
            timing = card.stage.timing
            rows.append(
                {
                    "engine": engine,
                    "case": label,
                    "speaker_ppm": speaker_ppm,
                    "mic_ppm": mic_ppm,
                    "rt60_s": rt60,
                    "erle_first_s_db": round(float(later[:, 0].mean()), 1),
                    "erle_1_2s_db": round(float(later[:, 1].mean()), 1),
                    "erle_2s_end_db": round(float(later[:, 2].mean()), 1),
                    "worst_first_s_db": round(float(later[:, 0].min()), 1),
                    "rate_ppm": round(timing.rate * 1e6, 1),
                    "replies_moved": timing.runs_moved,
                    "cpu_s": round(time.thread_time() - cpu, 1),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="speex,mdf")
    parser.add_argument("--start-ms", type=float, default=2.0)
    parser.add_argument("--no-align", action="store_true", help="replies placed by write times")
    parser.add_argument("--no-rate", action="store_true", help="the crystals' rate not followed")
    parser.add_argument("--name")
    args = parser.parse_args()
    name = args.name or "echo_alignment" + "_no_align" * args.no_align + "_no_rate" * args.no_rate
    rows = [row for engine in args.engines.split(",") for row in measure(engine, args)]
    settings = {"start_ms": args.start_ms, "align": not args.no_align, "rate": not args.no_rate}
    path = write_results(name, {**settings, "replies": COUNT, "rows": rows})
    keys = list(rows[0])
    print_table(keys, [[row[k] for k in keys] for row in rows])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
