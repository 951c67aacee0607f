"""The satellite under soak: ``pocket-satellite run`` itself, with faults put in.

Run by ``bench/soak.py`` as ``python -m bench.soak_child LEDGER FAULT_EVERY STALL_EVERY --
RUN-ARGS...``. Around the unchanged product it adds only what a soak needs:
- a stage fault every FAULT_EVERY seconds: the next stage call the supervisor guards
  raises, so the real supervisor path (report, reset, go on) runs;
- a sink stall every STALL_EVERY seconds: the speaker blocks for 0.5 s, as a card
  that stops taking audio does;
- a ledger: each QoS 1 event handed to the MQTT link (intent, help, alert) is written
  to LEDGER as ``type utterance_id``, flushed at once, so the soak can tell which ones
  never reached the subscriber; stage errors too (they go out at QoS 0, so a broker
  restart may drop them: the ledger counts what the satellite reported).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from satellite.audio import io as audio_io
from satellite.cli import main
from satellite.mqtt.link import MqttLink
from satellite.supervisor import Supervisor

T = TypeVar("T")
#: Event types that go through the outbox (QoS 1) and must all arrive.
LEDGER_TYPES = ("intent", "help_requested", "alert", "alert_cleared")
STALL_SECONDS = 0.5


class Every:
    """True once per ``seconds`` of wall time (never when seconds <= 0)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.next = time.monotonic() + seconds

    def due(self) -> bool:
        if self.seconds <= 0 or time.monotonic() < self.next:
            return False
        self.next += self.seconds
        return True


class InjectedFaultError(RuntimeError):
    """A fault the soak put into a stage."""


def install(ledger: Path, fault_every: float, stall_every: float) -> None:
    out = ledger.open("a", buffering=1, encoding="utf-8")
    publish_event = MqttLink.publish_event

    def recorded(self: MqttLink, event: Any) -> None:
        if event.type_name in (*LEDGER_TYPES, "stage_error"):
            out.write(f"{event.type_name} {getattr(event, 'utterance_id', '')}\n")
        publish_event(self, event)

    MqttLink.publish_event = recorded  # type: ignore[method-assign]

    fault = Every(fault_every)
    guard = Supervisor.guard

    def faulty(
        self: Supervisor,
        stage: Any,
        call: Callable[[Any], T],
        frame: Any,
        fallback: T,
        events: list[Any],
    ) -> T:
        if fault.due():

            def call(_: Any) -> T:
                raise InjectedFaultError("fault injected by the soak")

        return guard(self, stage, call, frame, fallback, events)

    Supervisor.guard = faulty  # type: ignore[method-assign]

    stall = Every(stall_every)
    open_sink = audio_io.open_sink

    def stalling_sink(*args: Any, **kwargs: Any) -> Any:
        sink = open_sink(*args, **kwargs)
        write = sink.write

        def slow_write(chunk: Any) -> None:
            if stall.due():
                time.sleep(STALL_SECONDS)
            write(chunk)

        sink.write = slow_write  # type: ignore[method-assign]
        return sink

    audio_io.open_sink = stalling_sink
    import satellite.cli.run as run_module  # noqa: PLC0415

    run_module.open_sink = stalling_sink  # type: ignore[attr-defined]


if __name__ == "__main__":
    ledger, fault_every, stall_every, dashes, *run_args = sys.argv[1:]
    assert dashes == "--", "usage: soak_child LEDGER FAULT_EVERY STALL_EVERY -- RUN-ARGS"
    install(Path(ledger), float(fault_every), float(stall_every))
    sys.exit(main(["run", *run_args]))
