"""The wake word's downward expander (frontend.wake.expand_db): % woken and false wakes
per voice family and room, without it and at each depth.

Run on one core:  taskset -c 1 python bench/wake_expander.py [--step 4] [--hours 0.05]

"okay nabu, <command>" scenes (tests/corpus.py voices, every ``--step``-th command, per
voice family and room) and reading with no wake word in it (``--hours`` per voice, every
voice, per room) are heard as the default configuration hears them (WebRTC level 2, the
band check at its default floor) with the expander off and at each depth of
``--depths``. Writes bench/results/wake_expander.json and prints the tables, with the
expander's CPU time per 10 ms frame.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, rooms_labelled, write_results
from satellite.frontend.expander import DownwardExpander
from satellite.frontend.settings import WakeSettings
from satellite.frontend.wake_check import BandCheck, make_band_check
from tests import corpus, robustness, synth
from tests.understand import commands

SCENE_ROOMS = (
    "clean",
    "reverb",
    "white 10 dB",
    "babble 10 dB",
    "tv 10 dB",
    "people 10 dB",
    "babble 20 dB",
)
READING_ROOMS = ("clean", "reverb", "white 10 dB", "babble 10 dB", "people 10 dB")


@functools.cache
def _check() -> BandCheck | None:
    """The default band check (its decoders loaded once)."""
    return make_band_check(WakeSettings().checked_above, ("okay_nabu",))


def _band() -> BandCheck | None:
    """A fresh band check for one stretch of audio (None: off by default)."""
    made = _check()
    return None if made is None else BandCheck(made.check, made.checked_above, made.raised_above)


def _hits(audio: Any, depth: float) -> list[Any]:
    return robustness.wake_hits(audio, "webrtc2", band=_band(), expand_db=depth)


def run_scenes(rooms: tuple[corpus.Room, ...], step: int, depths: list[float]) -> dict[str, Any]:
    voices = corpus.available(corpus.VOICES_ALL)
    rows = [text for text, _, _ in commands()][::step]
    table: dict[str, Any] = {}
    for room in rooms:
        for family in corpus.FAMILIES:
            woke = dict.fromkeys(depths, 0)
            for index, voice, text in corpus.in_turn(voices, family, rows):
                audio = robustness.scene(voice, text, room, index).audio
                for depth in depths:
                    woke[depth] += bool(_hits(audio, depth))
            cell = {"n": len(rows), **{str(d): round(c / len(rows), 3) for d, c in woke.items()}}
            table[f"{family} | {room.label}"] = cell
            print(family, room.label, cell, file=sys.stderr)
    return table


def run_false(rooms: tuple[corpus.Room, ...], hours: float, depths: list[float]) -> dict[str, Any]:
    voices = corpus.available(corpus.VOICES_ALL)
    table: dict[str, Any] = {}
    for room in rooms:
        wakes = dict.fromkeys(depths, 0)
        which: list[dict[str, Any]] = []
        for index, voice in enumerate(voices):
            reading = robustness.talk(voice, hours * 3600.0, seed=index)
            audio = corpus.in_room(reading, room, index, reference=reading)
            for depth in depths:
                hits = _hits(audio, depth)
                wakes[depth] += len(hits)
                which += [
                    {"depth": depth, "voice": voice.label, "at_s": round(h.timestamp_seconds, 2)}
                    | {"probability": round(h.probability, 3), "checked": h.checked}
                    for h in hits
                ]
        total = hours * len(voices)
        table[room.label] = {"hours": round(total, 3), **{str(d): c for d, c in wakes.items()}}
        table[room.label]["wakes"] = which
        print(room.label, table[room.label], file=sys.stderr)
    return table


def cost(depth: float, seconds: float = 60.0) -> dict[str, float]:
    """CPU per 10 ms frame of the expander on a minute of babble-room reading."""
    voice = corpus.available(corpus.VOICES_ALL)[0]
    reading = robustness.talk(voice, seconds, seed=0)
    audio = corpus.in_room(reading, corpus.Room("babble", 10.0), 0, reference=reading)
    frames = list(synth.mic_chunks(audio, 0.01))
    expander = DownwardExpander(depth)
    began = time.thread_time()
    for frame in frames:
        expander.process(frame)
    spent = time.thread_time() - began
    return {"ms_per_frame": round(1000 * spent / len(frames), 4), "frames": len(frames)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=4, help="every STEP-th command")
    parser.add_argument("--hours", type=float, default=0.05, help="reading per voice per room, h")
    parser.add_argument("--depths", default="0,30,40", help="depths to compare, dB (0: off)")
    parser.add_argument("--rooms", default=",".join(SCENE_ROOMS), help="scene rooms (labels)")
    parser.add_argument("--reading-rooms", default=",".join(READING_ROOMS), help="rooms, labels")
    parser.add_argument("--rooms-off", action="store_true", help="no scenes: false wakes only")
    parser.add_argument("--name", default="wake_expander", help="bench/results/NAME.json")
    args = parser.parse_args()
    depths = [float(d) for d in args.depths.split(",")]
    rooms = () if args.rooms_off else rooms_labelled(parser, args.rooms.split(","))
    scenes = run_scenes(rooms, args.step, depths)
    reading_rooms = rooms_labelled(parser, args.reading_rooms.split(","))
    false = run_false(reading_rooms, args.hours, depths) if args.hours > 0 else {}
    spent = cost(max(depths) or 40.0)
    write_results(
        args.name,
        {"step": args.step, "depths": depths, "scenes": scenes, "false_wakes": false}
        | {"cost": spent},
    )
    print("% woken (default configuration: WebRTC 2, band check), by expander depth, dB")
    print_table(
        ["family | room", "n", *(f"{d:g} dB" for d in depths)],
        [[k, c["n"], *(round(100 * c[str(d)]) for d in depths)] for k, c in scenes.items()],
    )
    if false:
        print("false wakes in reading with no wake word, by depth")
        print_table(
            ["room", "hours", *(f"{d:g} dB" for d in depths)],
            [[k, f["hours"], *(f[str(d)] for d in depths)] for k, f in false.items()],
        )
    print("expander cost:", spent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
