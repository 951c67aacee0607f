"""Help delivery: a help request raised while HA is away reaches it once, however late.

Each round: "HA" (a paho client with a clean session, as HA's MQTT client is) is away;
the satellite (a real MqttLink with its outbox and open alerts) raises a help request;
every other round the broker is killed and restarted (no persistence: it forgets the
retained ``alert/active``); then HA connects, reads ``alert/active``, fires each alert
it has not fired (by id) and acknowledges it. Timed: HA subscribing -> the request
seen, and ack -> ``alert/active`` shows it closed. Also the cost of opening and
closing an alert (the JSON file next to the outbox), with and without fsync.

    taskset -c 0 ~/.cache/pocket-satellite/venv/bin/python bench/help_delivery.py
    ... --rounds 5                                  # a quick run

Writes bench/results/help_delivery.json.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, stats_ms, write_results
from satellite.mqtt.link import MqttLink
from satellite.mqtt.open_alerts import OpenAlerts
from satellite.mqtt.payloads import Command
from satellite.nlu.events import HelpRequested
from tests.mqtt_support import INFO, Mosquitto, Probe, link_settings

BASE = f"pocket_satellite/{INFO.id}"
ACTIVE = f"{BASE}/alert/active"
#: How long one step may take before the round counts as lost, s.
STEP_SECONDS = 20.0


def _wait(condition: Any, what: str) -> None:
    deadline = time.monotonic() + STEP_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.002)


def _ha_round(broker: Mosquitto, link: MqttLink, fired: set[str]) -> tuple[int, int, int]:
    """HA comes back: (subscribe -> seen ns, ack -> closed ns, events fired this round)."""
    start = time.perf_counter_ns()
    ha = Probe(broker.port, (ACTIVE,))
    try:
        fired_now = 0
        while True:
            message = ha.wait_for(ACTIVE, STEP_SECONDS)
            alerts = message.json()["alerts"]
            if alerts:
                break
        seen = time.perf_counter_ns() - start
        for alert in alerts:
            if alert["id"] not in fired:
                fired.add(alert["id"])
                fired_now += 1
        ack_at = time.perf_counter_ns()
        for alert in alerts:
            ha.publish(f"{BASE}/alert/ack", json.dumps({"id": alert["id"]}))
        while ha.wait_for(ACTIVE, STEP_SECONDS).json()["alerts"]:
            pass
        closed = time.perf_counter_ns() - ack_at
        _wait(lambda: len(link.alerts) == 0, "the satellite closing the alert")
        return seen, closed, fired_now
    finally:
        ha.close()


def run_delivery(rounds: int, folder: Path) -> dict[str, Any]:
    """The HA-away rounds against one broker and one satellite."""
    broker = Mosquitto(folder / "broker")
    broker.start()
    settings = link_settings(broker.port, folder / "outbox.sqlite3", discovery=False)
    inbox: queue.Queue[Command] = queue.Queue(64)
    link = MqttLink(settings, INFO, inbox)
    link.start()
    fired: set[str] = set()
    seen_ns: list[int] = []
    closed_ns: list[int] = []
    duplicates = lost = restarts = 0
    try:
        _wait(link.connected.is_set, "the satellite connecting")
        for index in range(rounds):
            link.publish_event(HelpRequested(float(index), f"u{index}", "", "urgent"))
            _wait(lambda: len(link.alerts) == 1, "the alert opening")
            if index % 2 == 1:
                broker.kill()
                broker.start()
                restarts += 1
                time.sleep(0.05)
                _wait(link.connected.is_set, "the satellite reconnecting")
            try:
                seen, closed, fired_now = _ha_round(broker, link, fired)
            except TimeoutError:
                lost += 1
                continue
            seen_ns.append(seen)
            closed_ns.append(closed)
            duplicates += max(0, fired_now - 1)
            lost += 1 - min(fired_now, 1)
    finally:
        link.stop()
        broker.stop()
    return {
        "rounds": rounds,
        "broker_restarts": restarts,
        "fired": len(fired),
        "fired_twice": duplicates,
        "lost": lost,
        "ha_back_to_seen": stats_ms(seen_ns) if seen_ns else None,
        "ack_to_closed": stats_ms(closed_ns) if closed_ns else None,
        "resent": link.alerts.resent,
        "unknown_acks": link.alerts.unknown_acks,
    }


def run_file_cost(count: int, folder: Path, fsync: bool) -> dict[str, Any]:
    """Open then acknowledge ``count`` alerts (one file write each), timed per call."""
    alerts = OpenAlerts(folder / f"cost-{fsync}.json", fsync=fsync)
    opened: list[int] = []
    acked: list[int] = []
    ids = [alerts.new_id("help_requested") or "" for _ in range(count)]
    for alert_id in ids:
        raw = json.dumps({"type": "help_requested", "id": alert_id, "time": 1.0}).encode()
        start = time.perf_counter_ns()
        alerts.open("help_requested", "help", alert_id, time.time(), raw)
        opened.append(time.perf_counter_ns() - start)
        if len(alerts) > 5:  # a few open at a time, as in life
            start = time.perf_counter_ns()
            alerts.ack(ids[len(acked)])
            acked.append(time.perf_counter_ns() - start)
    return {"fsync": fsync, "open": stats_ms(opened), "ack": stats_ms(acked)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--file-ops", type=int, default=200)
    parser.add_argument("--name", default="help_delivery", help="results file name")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="help-bench-") as tmp:
        folder = Path(tmp)
        delivery = run_delivery(args.rounds, folder)
        costs = [run_file_cost(args.file_ops, folder, fsync) for fsync in (False, True)]
    seen, closed = delivery["ha_back_to_seen"] or {}, delivery["ack_to_closed"] or {}
    print_table(
        ["rounds", "broker restarts", "fired", "fired twice", "lost"],
        [
            [
                delivery["rounds"],
                delivery["broker_restarts"],
                delivery["fired"],
                delivery["fired_twice"],
                delivery["lost"],
            ]
        ],
    )
    print()
    rows: list[list[Any]] = [
        ["HA subscribes -> help seen", seen.get("p50_ms"), seen.get("p95_ms"), seen.get("max_ms")],
        [
            "ack -> alert/active closed",
            closed.get("p50_ms"),
            closed.get("p95_ms"),
            closed.get("max_ms"),
        ],
    ]
    for cost in costs:
        label = "fsync" if cost["fsync"] else "no fsync"
        for op in ("open", "ack"):
            s = cost[op]
            rows.append([f"{op} an alert ({label})", s["p50_ms"], s["p95_ms"], s["max_ms"]])
    print_table(["what", "p50 ms", "p95 ms", "max ms"], rows)
    path = write_results(args.name, {"delivery": delivery, "file_cost": costs})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
