"""End to end: ``pocket-satellite run`` as users run it, against a naive pipeline.

Scripted interactions (okay nabu + a home command, a care question or a call for help,
in several flite voices) are fed in real time, 10 ms at a time, to ``pocket-satellite
run --input - --realtime`` in a child process pinned to one core, with a private
Mosquitto on loopback and a stand-in Home Assistant (a paho client here) that answers
every HA intent over MQTT. On one clock (CLOCK_MONOTONIC, shared by both processes):

- end of speech (from the script) -> the intent published (when the stand-in gets it),
- end of speech -> the first audible sample of the reply at the speaker (the output WAV,
  which --realtime keeps aligned with the input),
- CPU share of all the satellite's processes while idle (silence before the first
  turn), within 2 s after each request, and overall; peak RSS of them together;
  start-up to ``online``.

Run once with the LLM fallback and once without. Then the same interactions go through
a naive sequential pipeline built from the same engines (full silence timeout, the whole
utterance recognised after it ends, the whole reply synthesised before it plays, no early
endpoint), in this process on the same core.

    taskset -c 0 python bench/e2e.py [--turns 32]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from bench.e2e_naive import naive_latencies
from satellite.audio.chunk import FRAME_BYTES, PIPELINE_RATE_HZ
from satellite.nlu.intents import CARE_INTENTS
from satellite.scenario import ScriptLine, Turn, render
from satellite.stand_in_ha import answer_for
from tests import synth
from tests.mqtt_support import Mosquitto, Probe

BASE = "pocket_satellite/pocket_satellite"
VOICES = ("flite:rms", "flite:awb", "flite:kal16", "flite:slt")
REQUESTS = (
    ("turn on the kitchen light", "HassTurnOn", "home"),
    ("what time is it", "GetTime", "care"),
    ("turn off the bedroom lamp", "HassTurnOff", "home"),
    ("please call the nurse", "CallForHelp", "help"),
    ("turn on the living room light", "HassTurnOn", "home"),
    ("what day is it today", "GetDate", "care"),
    ("turn off the kitchen light", "HassTurnOff", "home"),
    ("I need help", "CallForHelp", "help"),
)
IDLE_SECONDS = 10.0
#: int16 level above which the output is sounding; low noise floor added to the input.
SOUND = 300
FLOOR_RMS = 30.0
OUTPUT_RATE_HZ = 22050
#: A stretch of sound this long is speech, shorter ones are the acknowledgement, s.
SPOKEN_SECONDS = 0.4


@dataclasses.dataclass
class Interaction:
    """One turn of the script and what the satellite did about it."""

    text: str
    expect: str
    kind: str
    voice: str
    start_seconds: float
    end_seconds: float
    next_seconds: float
    intent: str | None = None
    intent_ms: float | None = None
    #: The first sound of the answer (the acknowledgement, when the answer waits).
    reply_ms: float | None = None
    #: The first spoken word of the answer.
    spoken_ms: float | None = None


def _script(count: int) -> list[tuple[Turn, str]]:
    turns = []
    for index in range(count):
        text, expect, kind = REQUESTS[index % len(REQUESTS)]
        voice = VOICES[(index // len(REQUESTS) + index) % len(VOICES)]
        turns.append((Turn(text, expect, voice=voice), kind))
    return turns


def _scenario(turns: list[tuple[Turn, str]]) -> tuple[np.ndarray, list[Interaction]]:
    audio, script = render(tuple(turn for turn, _ in turns))
    samples = audio.to_int16().astype(np.float32)
    samples = np.concatenate([np.zeros(int(IDLE_SECONDS * PIPELINE_RATE_HZ)), samples])
    noise = np.random.default_rng(0).normal(0.0, FLOOR_RMS, len(samples))
    pcm = np.clip(np.round(samples + noise), -32768, 32767).astype("<i2")
    lines: list[ScriptLine] = script
    interactions = []
    for index, ((turn, kind), line) in enumerate(zip(turns, lines, strict=True)):
        following = lines[index + 1].start_seconds if index + 1 < len(lines) else 1e9
        interactions.append(
            Interaction(
                turn.text,
                turn.expect,
                kind,
                turn.voice,
                line.start_seconds + IDLE_SECONDS,
                line.end_seconds + IDLE_SECONDS,
                following + IDLE_SECONDS - 1.5,  # before the next wake word
            )
        )
    return pcm, interactions


class StandInHa:
    """Home Assistant's part over MQTT: answers HA intents, notes when each arrived."""

    def __init__(self, port: int) -> None:
        self.probe = Probe(port, (f"{BASE}/intent", f"{BASE}/status"))
        self.intents: list[tuple[float, dict[str, Any]]] = []
        self.online_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                message = self.probe.messages.get(timeout=0.1)
            except queue.Empty:
                continue
            now = time.monotonic()
            if message.topic.endswith("/status"):
                if message.payload == b"online" and self.online_at is None:
                    self.online_at = now
                continue
            data = json.loads(message.payload)
            self.intents.append((now, data))
            intent = data.get("intent")
            if intent and intent not in CARE_INTENTS:
                slots = data.get("slots")
                text = answer_for(intent, slots if isinstance(slots, dict) else {})
                answer = {"utterance_id": data["utterance_id"], "text": text}
                self.probe.client.publish(f"{BASE}/response", json.dumps(answer), qos=1)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.probe.close()


def _processes(pid: int) -> list[int]:
    """``pid`` and its descendants (the LLM worker)."""
    found = [pid]
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        found += _processes(int(child))
    return found


def _sample(pids: list[int]) -> tuple[float, float]:
    """CPU seconds and resident MB of these processes together."""
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = rss = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / ticks
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss += int(line.split()[1]) / 1024.0
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
    return cpu, rss


def run_satellite(
    pcm: np.ndarray, interactions: list[Interaction], llm: bool, folder: Path, core: int | None
) -> dict[str, Any]:
    """One real-time run of the satellite; fills in the interactions' figures."""
    broker = Mosquitto(folder / f"broker-{llm}")
    broker.start()
    ha = StandInHa(broker.port)
    config = folder / f"satellite-{llm}.yaml"
    output = folder / f"replies-{llm}.wav"
    config.write_text(
        f"player:\n  rate_hz: {OUTPUT_RATE_HZ}\n"
        f"llm:\n  enabled: {str(llm).lower()}\n"
        f"mqtt:\n  host: 127.0.0.1\n  port: {broker.port}\n"
        f"  outbox_path: {folder / f'outbox-{llm}.sqlite3'}\n"
        "logging:\n  level: WARNING\n"
    )
    command = [sys.executable, "-m", "satellite", "run", "--config", str(config)]
    command += ["--input", "-", "--output", str(output), "--realtime"]
    if core is not None:
        command = ["taskset", "-c", str(core), *command]
    started = time.monotonic()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdin is not None
    samples: list[tuple[float, float, float]] = []
    try:
        while ha.online_at is None:
            if child.poll() is not None or time.monotonic() - started > 60:
                raise SystemExit(f"the satellite did not come online: {child.stderr!r}")
            time.sleep(0.01)
        startup = ha.online_at - started
        time.sleep(0.5)
        data = pcm.tobytes()
        t0 = time.monotonic()
        for index, offset in enumerate(range(0, len(data), FRAME_BYTES)):
            target = t0 + index * 0.01
            delay = target - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            child.stdin.write(data[offset : offset + FRAME_BYTES])
            child.stdin.flush()
            if index % 25 == 0:
                cpu, rss = _sample(_processes(child.pid))
                samples.append((time.monotonic() - t0, cpu, rss))
        child.stdin.close()
        child.wait(timeout=120)
        err = child.stderr.read() if child.stderr is not None else b""
    finally:
        if child.poll() is None:
            child.kill()
        ha.close()
        broker.stop()
    _score(interactions, ha.intents, t0, output)
    return {
        "startup_to_online_seconds": round(startup, 2),
        "cpu": _cpu_shares(samples, interactions),
        "peak_rss_mb": round(max(rss for _, _, rss in samples), 1),
        "exit_code": child.returncode,
        "stderr_tail": err.decode(errors="replace")[-500:],
    }


def _score(
    interactions: list[Interaction],
    intents: list[tuple[float, dict[str, Any]]],
    t0: float,
    output: Path,
) -> None:
    with wave.open(str(output)) as reader:
        rate = reader.getframerate()
        played = np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2")
    runs = _sounding(played, rate)
    for item in interactions:
        window = [
            (at - t0, data)
            for at, data in intents
            if item.end_seconds - 0.5 <= at - t0 < item.next_seconds
        ]
        if window:
            at, data = window[0]
            item.intent = data.get("intent")
            item.intent_ms = round((at - item.end_seconds) * 1000.0, 1)
        mine = [(a, b) for a, b in runs if item.end_seconds < a < item.next_seconds]
        if mine:
            item.reply_ms = round((mine[0][0] - item.end_seconds) * 1000.0, 1)
        spoken = [a for a, b in mine if b - a >= SPOKEN_SECONDS]
        if spoken:
            item.spoken_ms = round((spoken[0] - item.end_seconds) * 1000.0, 1)


def _sounding(played: np.ndarray, rate: int) -> list[tuple[float, float]]:
    """(start, end) of each stretch of sound, s, split at 0.1 s of quiet."""
    return [(a / rate, b / rate) for a, b in synth.sounding(played, rate, SOUND, 0.1)]


def _cpu_shares(
    samples: list[tuple[float, float, float]], interactions: list[Interaction]
) -> dict[str, float]:
    def share(start: float, end: float) -> float | None:
        inside = [(t, cpu) for t, cpu, _ in samples if start <= t <= end]
        if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
            return None
        return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])

    answering = [share(i.end_seconds, i.end_seconds + 2.0) for i in interactions]
    known = [a for a in answering if a is not None]
    whole = share(0.0, samples[-1][0]) if samples else None
    return {
        "idle_percent": round(100 * (share(1.0, IDLE_SECONDS - 1.0) or 0.0), 1),
        "answering_percent": round(100 * float(np.mean(known)), 1) if known else -1.0,
        "overall_percent": round(100 * (whole or 0.0), 1),
    }


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50_ms": -1.0, "p95_ms": -1.0, "count": 0}
    array = np.asarray(values)
    return {
        "p50_ms": round(float(np.percentile(array, 50)), 1),
        "p95_ms": round(float(np.percentile(array, 95)), 1),
        "count": len(values),
    }


def summarize(interactions: list[Interaction]) -> dict[str, Any]:
    """Latencies per kind of request, and what was understood per voice."""
    out: dict[str, Any] = {}
    for kind in ("home", "care", "help"):
        mine = [i for i in interactions if i.kind == kind]
        right = [i for i in mine if i.intent == i.expect]
        out[kind] = {
            "understood_right": f"{len(right)}/{len(mine)}",
            "intent": percentiles([i.intent_ms for i in right if i.intent_ms is not None]),
            "reply": percentiles([i.reply_ms for i in right if i.reply_ms is not None]),
            "spoken": percentiles([i.spoken_ms for i in right if i.spoken_ms is not None]),
        }
    out["per_voice"] = {
        voice: f"{sum(i.intent == i.expect for i in interactions if i.voice == voice)}/"
        f"{sum(i.voice == voice for i in interactions)}"
        for voice in sorted({i.voice for i in interactions})
    }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=32, help="scripted interactions")
    parser.add_argument("--core", type=int, default=0, help="core for the satellite (-1: any)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the satellite without the LLM only (no LLM run, no naive pipeline); "
        "prints the table, writes e2e_quick.json",
    )
    args = parser.parse_args()
    core = None if args.core < 0 else args.core
    turns = _script(args.turns)
    pcm, template = _scenario(turns)
    seconds = len(pcm) / PIPELINE_RATE_HZ
    print(f"{len(turns)} interactions, {seconds:.0f} s of audio per run", file=sys.stderr)
    results: dict[str, Any] = {"turns": len(turns), "audio_seconds": round(seconds, 1)}
    with tempfile.TemporaryDirectory(prefix="pocket-e2e-") as tmp:
        for llm in (False,) if args.quick else (True, False):
            interactions = [dataclasses.replace(i) for i in template]
            print(f">> satellite, LLM {'on' if llm else 'off'}", file=sys.stderr)
            run = run_satellite(pcm, interactions, llm, Path(tmp), core)
            run["by_kind"] = summarize(interactions)
            run["interactions"] = [dataclasses.asdict(i) for i in interactions]
            results["llm_on" if llm else "llm_off"] = run
        if not args.quick:
            print(">> naive sequential pipeline", file=sys.stderr)
            results["naive"] = naive_latencies(pcm, template, Path(tmp))
    path = write_results("e2e_quick" if args.quick else "e2e", results)
    runs = [name for name in ("llm_on", "llm_off") if name in results]
    rows = []
    for name in runs:
        run = results[name]
        for kind in ("home", "care", "help"):
            figures = run["by_kind"][kind]
            rows.append(
                [
                    name,
                    kind,
                    figures["understood_right"],
                    figures["intent"]["p50_ms"],
                    figures["intent"]["p95_ms"],
                    figures["reply"]["p50_ms"],
                    figures["reply"]["p95_ms"],
                    figures["spoken"]["p50_ms"],
                    figures["spoken"]["p95_ms"],
                ]
            )
    for kind in ("home", "care", "help") if "naive" in results else ():
        naive = results["naive"][kind]
        times = [naive["p50_ms"], naive["p95_ms"]]
        rows.append(["naive", kind, naive["understood_right"], "", "", *times, *times])
    headers = ["run", "kind", "right", "intent p50", "intent p95", "sound p50", "sound p95"]
    print_table([*headers, "spoken p50", "spoken p95"], rows)
    for name in runs:
        run = results[name]
        print(
            f"{name}: start-up {run['startup_to_online_seconds']} s, peak RSS "
            f"{run['peak_rss_mb']} MB, CPU idle {run['cpu']['idle_percent']} %, answering "
            f"{run['cpu']['answering_percent']} %, voices {run['by_kind']['per_voice']}"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
