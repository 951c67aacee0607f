"""Broker killed with -9 three times mid-stream: how many QoS 1 events Home Assistant loses.

A real satellite link sends 900 numbered QoS 1 events (2 ms apart) to Mosquitto run with
config/mosquitto.conf (tests/test_broker_setup.py); the broker is killed with -9 and
restarted three times; Home Assistant's client (persistent session) reconnects 1 s after
each loss. Three set-ups:

- ``default autosave``: Mosquitto's own (saves every 30 minutes);
- ``documented, no re-send``: config/mosquitto.conf, satellite without the re-send of
  events acknowledged in the last 2 s before a lost connection;
- ``documented``: config/mosquitto.conf and the satellite as shipped.

    taskset -c 0 ~/.cache/pocket-satellite/venv/bin/python bench/broker_kill.py --trials 5

Writes bench/results/broker_kill.json.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from satellite.mqtt import worker
from tests.test_broker_setup import COUNT, KILLS_AT, example_broker, stream_through_three_kills

SETUPS = {
    "default autosave": (False, worker.RESEND_ACKED_SECONDS),
    "documented, no re-send": (True, 0.0),
    "documented": (True, worker.RESEND_ACKED_SECONDS),
}


def trial(autosave: bool, resend_seconds: float) -> dict[str, Any]:
    """One run: events lost (sent, never received by HA) and how long it took."""
    worker.RESEND_ACKED_SECONDS = resend_seconds
    with tempfile.TemporaryDirectory() as folder:
        broker = example_broker(Path(folder) / "broker", autosave=autosave)
        broker.start()
        started = time.monotonic()
        try:
            seqs = stream_through_three_kills(broker, Path(folder), collect_seconds=60)
        finally:
            broker.stop()
    return {"lost": len(set(range(COUNT)) - set(seqs)), "seconds": time.monotonic() - started}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    results: dict[str, Any] = {}
    rows = []
    for name, (autosave, resend) in SETUPS.items():
        runs = [trial(autosave, resend) for _ in range(args.trials)]
        lost = [r["lost"] for r in runs]
        results[name] = {"lost_per_trial": lost, "events_per_trial": COUNT}
        rows.append(
            [
                name,
                args.trials,
                sum(lost),
                f"{sum(1 for n in lost if n)}/{args.trials}",
                max(lost),
                f"{sum(r['seconds'] for r in runs) / len(runs):.1f}",
            ]
        )
    path = write_results(
        "broker_kill", {"kills_at": list(KILLS_AT), "events": COUNT, "setups": results}
    )
    print_table(["set-up", "trials", "lost", "trials losing", "worst", "s/trial"], rows)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
