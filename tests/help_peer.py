"""The satellite's side of the HA suite's real-broker test (tests/ha/test_real_broker.py).

Run with the satellite's venv (Python 3.11; the HA venv cannot import ``satellite``):
``python -m tests.help_peer --port P --folder F``. It runs the real MQTT link, with a
quick re-send schedule, and answers one command per line on stdin:

- ``help``: publish a HelpRequested (as the dialogue does), answer ``asked``;
- ``state``: answer ``open N connects M`` (alerts not yet acknowledged by HA, and how
  often the link has connected to the broker);
- ``quit``: stop the link and exit.
"""

from __future__ import annotations

import argparse
import queue
import sys
from pathlib import Path

from satellite.mqtt.link import MqttLink
from satellite.mqtt.open_alerts import OpenAlerts, open_alerts_path
from satellite.mqtt.payloads import Command
from satellite.nlu.events import HelpRequested
from tests.mqtt_support import INFO, link_settings

#: Re-send waits, s: quick, so that re-sends reach HA while the test watches.
RESEND_AFTER_SECONDS = (0.5, 1.0, 1.0, 1.0)


def main(argv: list[str]) -> int:
    """Serve stdin commands until ``quit`` or end of input."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--folder", type=Path, required=True)
    args = parser.parse_args(argv)
    settings = link_settings(args.port, args.folder / "outbox.sqlite3", outbox_fsync=False)
    alerts = OpenAlerts(
        open_alerts_path(settings.outbox_file), False, resend_after_seconds=RESEND_AFTER_SECONDS
    )
    inbox: queue.Queue[Command] = queue.Queue(64)
    link = MqttLink(settings, INFO, inbox, alerts=alerts)
    link.start()
    try:
        for line in sys.stdin:
            command = line.strip()
            if command == "help":
                link.publish_event(HelpRequested(1.0, "u1", "", "urgent"))
                print("asked", flush=True)
            elif command == "state":
                print(f"open {len(alerts)} connects {link.stats.connects}", flush=True)
            elif command == "quit":
                break
    finally:
        link.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
