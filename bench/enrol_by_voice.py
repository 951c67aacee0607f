"""Enrolment by voice: does a voice enrolled by saying the prompts back to the satellite
lift command accuracy as much as one enrolled from recordings?

Run on one core:  taskset -c 1 python bench/enrol_by_voice.py [--step 2] [--room reverb]
(``--room`` clean, reverb, or a noisy room KIND:SNR such as white:20 or babble:20, whose
noise goes on all along, SNR dB below the person's speech).

For each voice (one per family) in the room: the whole enrolment by voice through the app
(tests/enrol_by_voice_support.py: the real pipeline and recognizer, eSpeak NG saying each
prompt, the voice saying it back once the satellite listens, 20 prompts), timed in audio
seconds from the request to ``done``; its takes kept, prompts asked again, the takes'
speech and the adaptation's time. Then, as bench/enrol.py does, the commands of
tests/data/commands.tsv (every ``--step``-th) after "okay nabu" in the same room, with no
speaker, with the adaptation made by voice, and with one made from recordings of the
first 20 prompts (``pocket-satellite enrol``'s way, bench/enrol.py).
Writes bench/results/enrol_by_voice[_ROOM].json and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, print_table, write_results
from bench.enrol import VOICES, accuracy, enrol_voice, with_speaker
from satellite.config import Config
from satellite.enrol.prompted import DEFAULT_PROMPTS
from satellite.events import EnrolmentChanged
from satellite.mqtt.payloads import EnrolRequest
from satellite.stt.speakers import MANIFEST_FILE
from tests import corpus
from tests.enrol_by_voice_support import ROOM_SECONDS, enrol_by_voice


def by_voice(voice: corpus.Voice, room: corpus.Room, speakers: Path, raw: bool) -> dict[str, Any]:
    """Enrol ``voice`` by voice in ``room`` into ``speakers`` (``raw``: takes of the
    microphone's audio, else as heard after the front end): what it came to."""
    name = f"{voice.family}-{voice.name}-{'raw' if raw else 'heard'}".replace("_", "-")
    request = EnrolRequest("start", name, DEFAULT_PROMPTS)
    published, _, ended = enrol_by_voice(Config(), speakers, request, voice, room, raw=raw)
    steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
    manifest_path = speakers / name / MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    return {
        "speaker": name,
        "outcome": steps[-1].state if steps else "none",
        "error": steps[-1].error if steps else "",
        "prompts": DEFAULT_PROMPTS,
        "kept": steps[-1].kept if steps else 0,
        "asked_again": sum(1 for e in steps if e.again),
        "session_seconds": round(ended - ROOM_SECONDS, 1),
        "speech_seconds": manifest.get("speech_seconds"),
        "used": manifest.get("used"),
        "not_aligned": manifest.get("ignored"),
        "adapt_seconds": manifest.get("adapt_seconds"),
        "adapt_cpu_seconds": manifest.get("adapt_cpu_seconds"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=2, help="every STEP-th command")
    parser.add_argument("--room", default="reverb", help="clean, reverb, or KIND:SNR (white:20)")
    parser.add_argument("--voices", type=int, default=len(VOICES), help="the first N voices")
    parser.add_argument(
        "--takes", choices=("raw", "heard", "both"), default="raw",
        help="takes of the microphone's audio (the default), as heard after the front end, "
        "or both, each enrolled apart",
    )  # fmt: skip
    args = parser.parse_args()
    kind, _, snr = args.room.partition(":")
    room = corpus.Room(kind, float(snr) if snr else None)
    voices = corpus.available(VOICES[: args.voices])
    sessions: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-enrol-voice-") as tmp:
        work = Path(tmp)
        for voice in voices:
            plan: list[tuple[str, str | None]] = [("none", None)]
            for raw in {"raw": (True,), "heard": (False,), "both": (True, False)}[args.takes]:
                how = "by voice" + ("" if raw else " (heard)")
                session = by_voice(voice, room, work / "speakers", raw)
                sessions[f"{voice.label} {how}"] = session
                print(f"  enrolled {voice.label} {how}: {session}", flush=True)
                plan.append((how, session["speaker"] if session["outcome"] == "done" else None))
            recorded = enrol_voice(voice, room, work)
            for how, speaker in [*plan, ("recordings", recorded["speaker"])]:
                if how != "none" and speaker is None:
                    continue
                config = with_speaker(Config(), speaker, work / "speakers")
                result = accuracy(config, voice, room, args.step)
                rows.append({"voice": voice.label, "adaptation": how, **result})
                print(f"  {voice.label} with {how}: {result}", flush=True)
    for row in rows:
        plain = next(r for r in rows if r["voice"] == row["voice"] and r["adaptation"] == "none")
        row["lift_points"] = round(100 * (row["right_or_asked"] - plain["right_or_asked"]), 1)
    print_table(
        ["voice", "outcome", "kept", "asked again", "session s", "speech s", "used",
         "adapt s (CPU)"],
        [[k, s["outcome"], f"{s['kept']}/{s['prompts']}", s["asked_again"],
          s["session_seconds"], s["speech_seconds"], s["used"], s["adapt_cpu_seconds"]]
         for k, s in sessions.items()],
    )  # fmt: skip
    print_table(
        ["voice", "room", "adaptation", "n", "right %", "right+asked %", "lift pts",
         "wrong %"],
        [[r["voice"], room.label, r["adaptation"], r["n"], f"{100 * r['right']:.0f}",
          f"{100 * r['right_or_asked']:.0f}", r["lift_points"],
          f"{100 * r['wrong_intent']:.0f}"] for r in rows],
    )  # fmt: skip
    results = {
        "machine": machine(),
        "room": room.label,
        "command_step": args.step,
        "sessions": sessions,
        "takes": args.takes,
        "rows": rows,
    }
    name = "enrol_by_voice" + ("" if args.room == "reverb" else f"_{kind}{snr}")
    name += "" if args.takes == "raw" else f"_{args.takes}"
    print(write_results(name + ("" if args.step == 2 else f"_step{args.step}"), results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
