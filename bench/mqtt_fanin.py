"""MQTT fan-in: many satellites publishing QoS 1 events to one Mosquitto, and TTS round trips.

Each simulated satellite is a real :class:`satellite.mqtt.MqttLink` (its own paho client,
worker thread and on-disk outbox), publishing numbered QoS 1 events through the outbox
at a steady rate. One subscriber stands in for Home Assistant and records when each
event arrives. Satellite 0 also answers ``tts/request`` with eSpeak NG, and the
subscriber times request -> WAV.

    taskset -c 0 ~/.cache/pocket-satellite/venv/bin/python bench/mqtt_fanin.py
    ... --satellites 10 --rate 5 --seconds 10     # a quick run

Writes bench/results/mqtt_fanin.json.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, stats_ms, write_results
from satellite.mqtt.link import MqttLink
from satellite.mqtt.payloads import Command, Info, TtsRequest
from satellite.mqtt.tts_responder import TtsResponder
from satellite.tts.espeak import EspeakEngine
from tests.mqtt_support import (
    SOAK_ROUTES,
    Mosquitto,
    Probe,
    SoakEvent,
    link_settings,
)


def _satellites(
    count: int, port: int, folder: Path, fsync: bool
) -> list[tuple[MqttLink, queue.Queue[Command]]]:
    links = []
    for index in range(count):
        sat_id = f"sat{index:03d}"
        info = Info(sat_id, sat_id, "bench", "en", ("okay_nabu",), ("en-us",), ("tts",))
        inbox: queue.Queue[Command] = queue.Queue(64)
        settings = link_settings(
            port, folder / f"{sat_id}.sqlite3", outbox_fsync=fsync, discovery=False
        )
        links.append((MqttLink(settings, info, inbox, SOAK_ROUTES), inbox))
    return links


def _serve_tts(inbox: queue.Queue[Command], responder: TtsResponder, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            command = inbox.get(timeout=0.1)
        except queue.Empty:
            continue
        if isinstance(command, TtsRequest):
            responder.request(command)


def _collect(consumer: Probe) -> tuple[dict[tuple[str, int], float], dict[str, float], int]:
    """First arrival of each (satellite, seq) event and each TTS answer; duplicates."""
    arrivals: dict[tuple[str, int], float] = {}
    tts_arrivals: dict[str, float] = {}
    duplicates = 0
    for message in consumer.drain(1.0):
        sat = message.topic.split("/")[1]
        if "/tts/response/" in message.topic:
            tts_arrivals.setdefault(message.topic.rsplit("/", 1)[-1], message.arrived)
            continue
        key = (sat, int(message.json()["seq"]))
        if key in arrivals:
            duplicates += 1
        else:
            arrivals[key] = message.arrived
    return arrivals, tts_arrivals, duplicates


def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="mqtt-fanin-"))
    broker = Mosquitto(folder / "broker")
    broker.start()
    consumer = Probe(broker.port, ("pocket_satellite/+/alert", "pocket_satellite/+/tts/response/+"))
    links = _satellites(args.satellites, broker.port, folder, args.fsync)
    for link, _ in links:
        link.start()
    for link, _ in links:
        if not link.connected.wait(30):
            raise SystemExit("a satellite could not connect")
    print(
        f"{args.satellites} satellites connected to mosquitto on port {broker.port}",
        file=sys.stderr,
    )

    first_link, first_inbox = links[0]
    stop = threading.Event()
    responder = TtsResponder(
        EspeakEngine(),
        first_link.publish,
    )
    server = threading.Thread(target=_serve_tts, args=(first_inbox, responder, stop), daemon=True)
    server.start()

    sent: dict[tuple[str, int], float] = {}
    tts_sent: dict[str, float] = {}
    interval = 1.0 / args.rate
    total_ticks = int(args.seconds * args.rate)
    tts_every = max(1, total_ticks // max(1, args.tts_requests)) if args.tts_requests else 0
    start = time.perf_counter()
    for tick in range(total_ticks):
        for index, (link, _) in enumerate(links):
            due = start + tick * interval + index * interval / len(links)
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sent[(link.info.id, tick)] = time.perf_counter()
            link.publish_event(SoakEvent(float(tick), seq=tick))
        if tts_every and tick % tts_every == 0 and len(tts_sent) < args.tts_requests:
            request_id = f"bench{tick}"
            tts_sent[request_id] = time.perf_counter()
            consumer.client.publish(
                f"pocket_satellite/{first_link.info.id}/tts/request",
                json.dumps({"id": request_id, "text": "The kitchen light is now on."}),
                qos=1,
            )
        if tick % (args.rate * 10) == 0:
            print(f"  {tick / args.rate:5.0f} s", file=sys.stderr)
    elapsed = time.perf_counter() - start

    for link, _ in links:
        link.wait_idle(60)
    arrivals, tts_arrivals, duplicates = _collect(consumer)
    stop.set()
    responder.close()
    for link, _ in links:
        link.stop()
    consumer.close()
    broker.stop()

    latencies = [int((arrivals[k] - t) * 1e9) for k, t in sent.items() if k in arrivals]
    tts = [int((tts_arrivals[k] - t) * 1e9) for k, t in tts_sent.items() if k in tts_arrivals]
    return {
        "satellites": args.satellites,
        "rate_per_satellite_hz": args.rate,
        "seconds": round(elapsed, 1),
        "qos": 1,
        "through_outbox": True,
        "outbox_fsync": args.fsync,
        "sent": len(sent),
        "delivered": len(arrivals),
        "lost": len(sent) - len(arrivals),
        "duplicates": duplicates,
        "event_latency": stats_ms(latencies) if latencies else None,
        "tts_requests": len(tts_sent),
        "tts_answered": len(tts),
        "tts_round_trip": stats_ms(tts) if tts else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--satellites", type=int, default=50)
    parser.add_argument("--rate", type=int, default=10, help="events per second per satellite")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--tts-requests", type=int, default=30)
    parser.add_argument("--fsync", action="store_true", help="fsync every outbox write")
    parser.add_argument("--name", default="mqtt_fanin", help="results file name")
    args = parser.parse_args()
    result = run(args)
    latency = result["event_latency"] or {}
    rows: list[list[Any]] = [
        [
            "QoS 1 events",
            result["sent"],
            result["delivered"],
            result["lost"],
            latency.get("p50_ms", "-"),
            latency.get("p95_ms", "-"),
            latency.get("max_ms", "-"),
        ],
    ]
    if result["tts_round_trip"]:
        t = result["tts_round_trip"]
        rows.append(
            [
                "tts/request -> WAV",
                result["tts_requests"],
                result["tts_answered"],
                result["tts_requests"] - result["tts_answered"],
                t["p50_ms"],
                t["p95_ms"],
                t["max_ms"],
            ]
        )
    print_table(["what", "sent", "delivered", "lost", "p50 ms", "p95 ms", "max ms"], rows)
    print(f"duplicates dropped: {result['duplicates']}")
    path = write_results(args.name, result)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
