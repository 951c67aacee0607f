"""Idle listening: the CPU share of ``pocket-satellite run`` while it hears only silence.

Starts the satellite as users run it and as ``bench/e2e.py`` does (``run --input -
--realtime``, a private Mosquitto on loopback, the player at 22050 Hz) with the output a
WAV file (paced like a sound card) or ALSA's ``file`` plugin, with the LLM fallback off
and on. This process feeds it a quiet room (a low noise floor, as e2e's) 10 ms at a time
in real time, lets it settle (and the LLM worker finish loading), then reads the CPU
seconds (``/proc/PID/stat`` utime + stime) of the satellite and its children (the LLM
worker) over ``--seconds`` of silence, per process and per thread. Each configuration
is repeated ``--repeats`` times; the table shows the mean and the spread.

CPU seconds are less disturbed than wall time by other load on the machine, but not
immune to it (cache and frequency): say so when the machine was shared.

    taskset -c 1 python bench/idle.py [--seconds 25] [--repeats 3] [--core 1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from satellite.audio.chunk import FRAME_BYTES, PIPELINE_RATE_HZ
from tests.mqtt_support import Mosquitto, Probe

BASE = "pocket_satellite/pocket_satellite"
#: The noise floor of the quiet room fed in (int16 RMS), as bench/e2e.py's.
FLOOR_RMS = 30.0
OUTPUT_RATE_HZ = 22050
#: Run configurations: (name, LLM on, output kind).
CONFIGS = (
    ("wav, LLM off", False, "wav"),
    ("wav, LLM on", True, "wav"),
    ("alsa file, LLM off", False, "alsa"),
)


@dataclass
class Measure:
    """One measured stretch of silence."""

    seconds: float
    #: CPU seconds per process (by its command), summed over the stretch.
    per_process: dict[str, float] = field(default_factory=dict)
    #: CPU seconds per thread (``pid/tid comm``), the busiest first.
    per_thread: dict[str, float] = field(default_factory=dict)

    @property
    def percent(self) -> float:
        """All the satellite's processes together, % of one core."""
        return 100.0 * sum(self.per_process.values()) / self.seconds


def _children(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found = [pid]
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += _children(int(child))
    except FileNotFoundError:
        pass
    return found


def _cpu_seconds(stat: Path) -> float:
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _snapshot(pid: int) -> tuple[dict[str, float], dict[str, float]]:
    """CPU seconds so far per process and per thread of ``pid`` and its children."""
    processes: dict[str, float] = {}
    threads: dict[str, float] = {}
    for index, proc in enumerate(_children(pid)):
        name = "satellite" if index == 0 else f"child {proc}"
        try:
            processes[name] = _cpu_seconds(Path(f"/proc/{proc}/stat"))
            for task in Path(f"/proc/{proc}/task").iterdir():
                comm = (task / "comm").read_text().strip()
                threads[f"{name}/{task.name} {comm}"] = _cpu_seconds(task / "stat")
        except (FileNotFoundError, ProcessLookupError):
            continue
    return processes, threads


def _difference(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {key: round(value - before.get(key, 0.0), 3) for key, value in after.items()}


class Feeder(threading.Thread):
    """Writes a quiet room to the satellite's stdin, 10 ms at a time, in real time."""

    def __init__(self, child: subprocess.Popen[bytes]) -> None:
        super().__init__(daemon=True)
        self._child = child
        self._halt = threading.Event()
        rng = np.random.default_rng(0)
        noise = rng.normal(0.0, FLOOR_RMS, PIPELINE_RATE_HZ * 10)
        self._loop = np.clip(np.round(noise), -32768, 32767).astype("<i2").tobytes()

    def run(self) -> None:
        stdin = self._child.stdin
        assert stdin is not None
        start = time.monotonic()
        index = 0
        try:
            while not self._halt.is_set():
                offset = (index * FRAME_BYTES) % len(self._loop)
                stdin.write(self._loop[offset : offset + FRAME_BYTES])
                stdin.flush()
                index += 1
                delay = start + index * 0.01 - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        except (BrokenPipeError, ValueError):
            return

    def stop(self) -> None:
        self._halt.set()
        self.join(5)


def _config(folder: Path, port: int, llm: bool) -> Path:
    config = folder / f"satellite-{llm}.yaml"
    config.write_text(
        f"player:\n  rate_hz: {OUTPUT_RATE_HZ}\n"
        f"llm:\n  enabled: {str(llm).lower()}\n"
        f"mqtt:\n  host: 127.0.0.1\n  port: {port}\n"
        f"  outbox_path: {folder / f'outbox-{llm}.sqlite3'}\n"
        "logging:\n  level: WARNING\n"
    )
    return config


def _alsa_env(folder: Path) -> dict[str, str]:
    """ALSA's ``file`` plugin in front of ``null`` as the default device (no sound card)."""
    asoundrc = folder / "asoundrc"
    asoundrc.write_text(
        f'pcm.fileplay {{ type file slave.pcm {{ type null }} file "{folder / "play.raw"}" '
        'format "raw" }\n'
        'pcm.!default { type plug slave.pcm "fileplay" }\n'
    )
    return {**os.environ, "ALSA_CONFIG_PATH": f"/usr/share/alsa/alsa.conf:{asoundrc}"}


def measure_once(
    folder: Path, llm: bool, output: str, settle: float, seconds: float, core: int | None
) -> Measure:
    """Start the satellite, feed it silence, measure ``seconds`` after ``settle``."""
    broker = Mosquitto(folder / "broker")
    broker.start()
    probe = Probe(broker.port, (f"{BASE}/status",))
    config = _config(folder, broker.port, llm)
    sink = "alsa:default" if output == "alsa" else str(folder / "replies.wav")
    command = [sys.executable, "-m", "satellite", "run", "--config", str(config)]
    command += ["--input", "-", "--output", sink, "--realtime"]
    if core is not None:
        command = ["taskset", "-c", str(core), *command]
    env = _alsa_env(folder) if output == "alsa" else None
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    feeder = Feeder(child)
    try:
        _wait_online(probe, child)
        feeder.start()
        time.sleep(settle)
        _wait_children_quiet(child.pid)
        before = _snapshot(child.pid)
        started = time.monotonic()
        time.sleep(seconds)
        after = _snapshot(child.pid)
        elapsed = time.monotonic() - started
        if child.poll() is not None:
            raise SystemExit(f"the satellite ended early: {_stderr(child)}")
    finally:
        feeder.stop()
        if child.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                child.stdin.close()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        probe.close()
        broker.stop()
    threads = _difference(after[1], before[1])
    busiest = dict(sorted(threads.items(), key=lambda item: -item[1])[:8])
    return Measure(round(elapsed, 3), _difference(after[0], before[0]), busiest)


def _wait_children_quiet(pid: int, limit_seconds: float = 60.0) -> None:
    """Wait until the satellite's children (the LLM worker loading its model) use no CPU
    for a second: the idle stretch starts after loading."""
    deadline = time.monotonic() + limit_seconds
    last = -1.0
    while time.monotonic() < deadline:
        processes, _ = _snapshot(pid)
        used = sum(cpu for name, cpu in processes.items() if name != "satellite")
        if used == last:
            return
        last = used
        time.sleep(1.0)


def _wait_online(probe: Probe, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise SystemExit(f"the satellite ended before it came online: {_stderr(child)}")
        try:
            message = probe.messages.get(timeout=0.1)
        except queue.Empty:
            continue
        if message.payload == b"online":
            return
    raise SystemExit("the satellite did not come online within 90 s")


def _stderr(child: subprocess.Popen[bytes]) -> str:
    if child.stderr is None:
        return ""
    return child.stderr.read().decode(errors="replace")[-800:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=25.0, help="silence measured per run")
    parser.add_argument("--settle", type=float, default=5.0, help="silence before measuring, s")
    parser.add_argument("--repeats", type=int, default=3, help="runs per configuration")
    parser.add_argument("--core", type=int, default=1, help="core for the satellite (-1: any)")
    parser.add_argument(
        "--only", default=None, help="run only the configurations whose name contains this"
    )
    parser.add_argument("--name", default="idle", help="results file: bench/results/NAME.json")
    args = parser.parse_args()
    core = None if args.core < 0 else args.core
    configs = [c for c in CONFIGS if args.only is None or args.only in c[0]]
    if not configs:
        raise SystemExit(f"--only {args.only!r} matches none of {[c[0] for c in CONFIGS]}")
    results: dict[str, Any] = {
        "seconds": args.seconds,
        "settle_seconds": args.settle,
        "core": core,
        "load_average_at_start": list(os.getloadavg()),
        "runs": {},
    }
    rows = []
    for name, llm, output in configs:
        runs = []
        for repeat in range(args.repeats):
            print(f">> {name}, run {repeat + 1}/{args.repeats}", file=sys.stderr)
            with tempfile.TemporaryDirectory(prefix="pocket-idle-") as tmp:
                runs.append(measure_once(Path(tmp), llm, output, args.settle, args.seconds, core))
        percents = [run.percent for run in runs]
        results["runs"][name] = {
            "percent_of_core": [round(p, 2) for p in percents],
            "mean_percent": round(float(np.mean(percents)), 2),
            "min_percent": round(min(percents), 2),
            "max_percent": round(max(percents), 2),
            "per_process_cpu_seconds": [run.per_process for run in runs],
            "busiest_threads_cpu_seconds": [run.per_thread for run in runs],
        }
        rows.append(
            [
                name,
                len(runs),
                f"{np.mean(percents):.2f}",
                f"{min(percents):.2f}-{max(percents):.2f}",
                " ".join(f"{p:.2f}" for p in percents),
            ]
        )
    results["load_average_at_end"] = list(os.getloadavg())
    path = write_results(args.name, results)
    print_table(["configuration", "runs", "mean % core", "spread", "each run"], rows)
    print(f"load average {results['load_average_at_start']} -> {results['load_average_at_end']}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
