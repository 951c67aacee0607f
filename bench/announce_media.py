"""Announcing media: how long a WAV takes to reach the satellite, two ways.

- ``mqtt`` (what the component does): Home Assistant publishes the WAV on ``play/<id>``;
  timed from the publish until the satellite's link has validated and decoded it into a
  PlayRequest in its inbox (a real MqttLink and Mosquitto).
- ``http`` (the alternative): the satellite is told a URL and fetches the WAV from a web
  server (Python's http.server standing in for Home Assistant), then decodes it; timed
  from the request until it is decoded. The MQTT message carrying the URL (~0.3 ms,
  see mqtt_fanin) is not included.

Run on one core: ``taskset -c 0 ~/.cache/pocket-satellite/venv/bin/python
bench/announce_media.py``. Prints a table and writes bench/results/announce_media.json.
"""

from __future__ import annotations

import argparse
import http.server
import io
import queue
import sys
import tempfile
import threading
import time
import urllib.request
import wave
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import print_table, stats_ms, write_results
from satellite.mqtt.link import MqttLink
from satellite.mqtt.media import decode_play
from satellite.mqtt.payloads import Command, Info, PlayRequest
from tests.mqtt_support import SOAK_ROUTES, Mosquitto, Probe, link_settings

SECONDS = (1.0, 5.0, 30.0)
RATE_HZ = 16000


def _wav(seconds: float) -> bytes:
    samples = (np.sin(np.arange(int(seconds * RATE_HZ)) * 0.1) * 8000).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(RATE_HZ)
        writer.writeframes(samples.tobytes())
    return buffer.getvalue()


def _over_mqtt(probe: Probe, inbox: queue.Queue[Command], wav: bytes, reps: int) -> list[int]:
    timings = []
    for rep in range(reps):
        start = time.perf_counter_ns()
        probe.publish(f"pocket_satellite/kitchen/play/r{rep}", wav)
        command = inbox.get(timeout=30)
        timings.append(time.perf_counter_ns() - start)
        assert isinstance(command, PlayRequest) and command.id == f"r{rep}"
    return timings


def _over_http(port: int, name: str, reps: int) -> list[int]:
    timings = []
    for rep in range(reps):
        start = time.perf_counter_ns()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/{name}", timeout=30) as response:
            decode_play(f"r{rep}", response.read())
        timings.append(time.perf_counter_ns() - start)
    return timings


def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="announce-media-"))
    for seconds in SECONDS:
        (folder / f"{seconds:g}.wav").write_bytes(_wav(seconds))
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(  # noqa: E731
        *a, directory=str(folder)
    )
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None  # type: ignore[method-assign]
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()

    broker = Mosquitto(folder / "broker")
    broker.start()
    info = Info("kitchen", "Kitchen", "bench", "en", ("okay_nabu",), ("en-us",), ("say",))
    inbox: queue.Queue[Command] = queue.Queue(64)
    settings = link_settings(broker.port, folder / "outbox.sqlite3", discovery=False)
    link = MqttLink(settings, info, inbox, SOAK_ROUTES)
    link.start()
    probe = Probe(broker.port, ("pocket_satellite/kitchen/say/done",))
    if not link.connected.wait(30):
        raise SystemExit("the satellite could not connect")
    rows: list[dict[str, Any]] = []
    try:
        for seconds in SECONDS:
            wav = (folder / f"{seconds:g}.wav").read_bytes()
            for way, timings in (
                ("mqtt", _over_mqtt(probe, inbox, wav, args.reps)),
                ("http", _over_http(web.server_address[1], f"{seconds:g}.wav", args.reps)),
            ):
                rows.append(
                    {"way": way, "audio_seconds": seconds, "bytes": len(wav), **stats_ms(timings)}
                )
    finally:
        probe.close()
        link.stop()
        broker.stop()
        web.shutdown()
    return {"rate_hz": RATE_HZ, "reps": args.reps, "results": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="transfers per size and way")
    results = run(parser.parse_args())
    print_table(
        ("way", "audio s", "bytes", "p50 ms", "p95 ms", "max ms"),
        [
            (r["way"], r["audio_seconds"], r["bytes"], r["p50_ms"], r["p95_ms"], r["max_ms"])
            for r in results["results"]
        ],
    )
    print(f"wrote {write_results('announce_media', results)}", file=sys.stderr)


if __name__ == "__main__":
    main()
