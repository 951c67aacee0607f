"""Soak: the satellite as users run it, for a long time, with everything going wrong.

``pocket-satellite run`` (through ``bench/soak_child.py``) hears the demo's sessions over
and over, fed as fast as it takes them, talking to a real Mosquitto with persistence on.
Meanwhile, on the wall clock:
- the broker is restarted every ``--restart-every`` s (by turns stopped and kill -9'd);
- a stage raises every ``--fault-every`` s (the supervisor must report, reset, go on);
- a malformed MQTT message arrives every second on one of the inbound topics;
- the speaker stalls for 0.5 s every ``--stall-every`` s.
A subscriber with a persistent session plays Home Assistant. At the end every QoS 1
event the satellite handed to its link (its ledger) must have reached the subscriber.

    taskset -c 0 ~/.cache/pocket-satellite/venv/bin/python -m bench.soak --minutes 60
    ~/.cache/pocket-satellite/venv/bin/python -m bench.soak --minutes 5 --name soak_short

Writes ``bench/results/<name>.json`` and ``<name>.png`` (RSS and loop time over time).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import RESULTS, print_table, write_results
from satellite.scenario import render
from tests.mqtt_support import Mosquitto, Probe, Received, run_config

REPO = Path(__file__).resolve().parent.parent
BASE = "pocket_satellite/+/"
#: What Home Assistant subscribes to (QoS 1 events), plus errors and metrics to watch.
WATCHED = ("intent", "help", "alert", "alert/cleared", "error", "metrics")
_TYPES = {"intent": "intent", "help": "help_requested", "alert": "alert"}
_TYPES["alert/cleared"] = "alert_cleared"
#: Malformed inbound messages, by turns: (topic under the satellite, payload).
MALFORMED: tuple[tuple[str, bytes], ...] = (
    ("say", b"{not json"),
    ("control", b'{"command": 5}'),
    ("response", b"\xff\xfe\x00garbage"),
    ("tts/request", json.dumps({"id": "../../etc", "text": "x"}).encode()),
    ("say", b'{"text": "' + b"a" * 70_000 + b'"}'),
    ("control", b'{"command": "volume", "volume": "loud"}'),
    ("response", b"null"),
    ("slots", b'{"names": 7}'),
)
FEED_BYTES = 3200  # 100 ms of 16 kHz mono S16


class Child:
    """The satellite process; restarted (and counted) when it dies, as systemd would."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.args = args
        self.env = env
        self.starts = 0
        self.crashes: list[int] = []
        self.process: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()
        self.start()

    def start(self) -> None:
        log = open(self.env["SOAK_LOG"], "ab")  # noqa: SIM115 - the child owns it
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.soak_child", *self.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=log,
            cwd=REPO,
            env=self.env,
        )
        self.starts += 1

    def check(self) -> None:
        """Restart a child that died on its own."""
        with self.lock:
            assert self.process is not None
            code = self.process.poll()
            if code is not None:
                self.crashes.append(code)
                self.start()

    def write(self, data: bytes) -> bool:
        process = self.process
        assert process is not None and process.stdin is not None
        try:
            process.stdin.write(data)
            return True
        except (BrokenPipeError, ValueError):
            time.sleep(0.2)  # dead: check() restarts it
            return False

    def finish(self, timeout: float) -> int | None:
        assert self.process is not None and self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return None


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (the LLM worker), MB."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
        pending += [int(c) for c in children]
    return total / 1024


def feed(child: Child, audio: bytes, stop: threading.Event) -> None:
    """The sessions, over and over, as fast as the satellite takes them."""
    offset = 0
    while not stop.is_set():
        if child.write(audio[offset : offset + FEED_BYTES]):
            offset = (offset + FEED_BYTES) % len(audio)


def soak(args: argparse.Namespace) -> dict[str, Any]:
    seconds = args.minutes * 60
    restart_every = args.restart_every or seconds / 12
    fault_every = args.fault_every or seconds / 6
    scenario, script = render()
    folder = Path(tempfile.mkdtemp(prefix="soak-"))
    broker = Mosquitto(folder / "broker", persistent=True)
    broker.start()
    probe = Probe(broker.port, tuple(BASE + t for t in WATCHED), "soak-ha", persistent=True)
    config = folder / "satellite.yaml"
    llm = "true" if args.llm else "false"
    config.write_text(
        run_config(broker.port, folder)
        + f"llm:\n  enabled: {llm}\nmetrics:\n  interval_seconds: 10\n"
    )
    ledger = folder / "ledger.txt"
    env = {**os.environ, "SOAK_LOG": str(folder / "satellite.log")}
    child = Child(
        [
            str(ledger),
            str(fault_every),
            str(args.stall_every),
            "--",
            "--config",
            str(config),
            "--input",
            "-",
        ],
        env,
    )
    stop = threading.Event()
    feeder = threading.Thread(target=feed, args=(child, scenario.samples, stop), daemon=True)
    feeder.start()
    started = time.monotonic()
    rss: list[tuple[float, float]] = []
    restarts = malformed = 0
    next_restart, next_sample = started + restart_every, started
    try:
        while (now := time.monotonic()) - started < seconds:
            child.check()
            topic, payload = MALFORMED[malformed % len(MALFORMED)]
            try:
                probe.client.publish(f"pocket_satellite/{_satellite_id()}/{topic}", payload, qos=0)
                malformed += 1
            except Exception:  # noqa: BLE001 - the broker may be restarting
                pass
            if now >= next_sample:
                assert child.process is not None
                rss.append((round(now - started, 1), round(tree_rss_mb(child.process.pid), 1)))
                next_sample += 5
            if now >= next_restart:
                (broker.kill if restarts % 2 else broker.stop)()
                time.sleep(1.0)
                broker.start()
                restarts += 1
                next_restart += restart_every
            time.sleep(1.0)
    finally:
        stop.set()
        feeder.join(5)
        exit_code = child.finish(120)
        time.sleep(3.0)
        received = probe.drain(3.0)
        probe.close()
        broker.stop()
    return summarise(args, ledger, received, child, exit_code, rss, restarts, malformed, script)


def _satellite_id() -> str:
    from satellite.config import SatelliteSettings  # noqa: PLC0415

    return SatelliteSettings().id


def summarise(
    args: argparse.Namespace,
    ledger: Path,
    received: list[Received],
    child: Child,
    exit_code: int | None,
    rss: list[tuple[float, float]],
    restarts: int,
    malformed: int,
    script: list[Any],
) -> dict[str, Any]:
    lines = [tuple(line.split(" ", 1)) for line in ledger.read_text().splitlines() if line]
    sent = [item for item in lines if item[0] in _TYPES.values()]
    reported = sum(1 for item in lines if item[0] == "stage_error")
    got: set[tuple[str, str]] = set()
    stage_errors = 0
    metrics: list[dict[str, Any]] = []
    for message in received:
        kind = message.topic.split("/", 2)[2]
        data = json.loads(message.payload)
        if kind == "error":
            stage_errors += 1
        elif kind == "metrics":
            metrics.append(data)
        elif kind in _TYPES:
            got.add((_TYPES[kind], str(data.get("utterance_id", ""))))
    lost = [item for item in dict.fromkeys(sent) if item not in got]
    times = np.array([t for t, _ in rss])
    mbs = np.array([m for _, m in rss])
    warm = times >= times.max() * 0.2 if len(times) else times
    growth = float(np.polyfit(times[warm], mbs[warm], 1)[0] * 3600) if warm.sum() >= 3 else 0.0
    lag = [m["gauges"].get("loop_backlog_p99_ms", 0.0) for m in metrics]
    work = [m["gauges"].get("loop_work_p99_ms", 0.0) for m in metrics]
    counted = max(reported, max((m["counters"].get("stage_errors", 0) for m in metrics), default=0))
    return {
        "minutes": args.minutes,
        "llm": args.llm,
        "sessions_per_loop": len(script),
        "crashes": len(child.crashes),
        "crash_exit_codes": child.crashes,
        "final_exit_code": exit_code,
        "satellite_starts": child.starts,
        "broker_restarts": restarts,
        "stage_errors_published": stage_errors,
        "stage_errors_counted": counted,
        "malformed_sent": malformed,
        "qos1_events_sent": len(set(sent)),
        "qos1_events_lost": len(lost),
        "lost_examples": [" ".join(item) for item in lost[:10]],
        "rss_mb": {
            "first": float(mbs[0]) if len(mbs) else 0,
            "max": float(mbs.max()) if len(mbs) else 0,
            "last": float(mbs[-1]) if len(mbs) else 0,
        },
        "rss_growth_mb_per_hour_after_warmup": round(growth, 2),
        "loop_backlog_p99_ms_max": max(lag, default=0.0),
        "loop_work_p99_ms_max": max(work, default=0.0),
        "rss_series": rss,
        "loop_work_p99_series": work,
        "loop_backlog_p99_series": lag,
    }


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5), sharex=False)
    series = result["rss_series"]
    top.plot([t / 60 for t, _ in series], [m for _, m in series])
    top.set_ylabel("RSS, MB")
    top.set_title(
        f"Soak {result['minutes']} min: {result['crashes']} crashes, "
        f"{result['qos1_events_lost']}/{result['qos1_events_sent']} QoS 1 events lost, "
        f"{result['broker_restarts']} broker restarts"
    )
    for name, label in (
        ("loop_work_p99_series", "work per chunk"),
        ("loop_backlog_p99_series", "backlog (lag live)"),
    ):
        values = result[name]
        bottom.plot([10 * (i + 1) / 60 for i in range(len(values))], values, label=label)
    bottom.set_ylabel("p99 per 10 s, ms")
    bottom.legend()
    bottom.set_xlabel("minutes")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--restart-every", type=float, default=0.0, help="s (default: 1/12)")
    parser.add_argument("--fault-every", type=float, default=0.0, help="s (default: 1/6)")
    parser.add_argument("--stall-every", type=float, default=30.0)
    parser.add_argument("--llm", action="store_true", help="with the LLM fallback")
    parser.add_argument("--name", default="soak")
    args = parser.parse_args()
    result = soak(args)
    write_results(args.name, result)
    plot(result, RESULTS / f"{args.name}.png")
    print_table(
        [
            "minutes",
            "crashes",
            "QoS1 sent",
            "lost",
            "broker restarts",
            "stage errors",
            "RSS max MB",
            "RSS growth MB/h",
            "loop backlog p99 ms",
        ],
        [
            [
                result["minutes"],
                result["crashes"],
                result["qos1_events_sent"],
                result["qos1_events_lost"],
                result["broker_restarts"],
                result["stage_errors_counted"],
                result["rss_mb"]["max"],
                result["rss_growth_mb_per_hour_after_warmup"],
                result["loop_backlog_p99_ms_max"],
            ]
        ],
    )
    return 0 if result["crashes"] == 0 and result["qos1_events_lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
