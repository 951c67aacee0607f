"""A readable timeline of a session: what was heard, understood, answered and alerted.

``Timeline`` wraps an event sink and prints one line per event a person cares about, and
per action the app carries out (``action``: what it says, what it asks of Home
Assistant), stamped with the time on the microphone's clock (seconds from the start of
the input).
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from .actions import Action, HaIntentRequested, ReplyRequested
from .app_contract import EventSink
from .events import Event, StageError, WakeDetected
from .nlu.events import HelpRequested, IntentRecognized
from .prosody.events import Alert, Prosody


def describe(event: Event | Action) -> str | None:
    """One line about ``event``, or None when it is not worth a line."""
    if isinstance(event, WakeDetected):
        return f'wake word "{event.wake_word}"'
    if isinstance(event, IntentRecognized):
        heard = f'heard "{event.text}"' if event.text else "heard something"
        if event.intent is None:
            return f"{heard}: not understood ({event.source})"
        return f"{heard} -> {event.intent} {_slots(event.slots)}({event.source})"
    if isinstance(event, HaIntentRequested):
        return f"asked Home Assistant: {event.intent} {_slots(event.slots)}".rstrip()
    if isinstance(event, ReplyRequested):
        return f'says "{event.text}"'
    if isinstance(event, HelpRequested):
        return f"ALERT: call for help ({event.severity}), caregivers told"
    if isinstance(event, Alert):
        return f"ALERT: rushed speech ({event.severity}, {event.ratio:.2f} x the baseline)"
    if isinstance(event, Prosody) and event.judged and event.ratio is not None:
        return f"speech rate {event.ratio:.2f} x this speaker's usual"
    if isinstance(event, StageError):
        return f"PROBLEM in {event.stage}: {event.message}"
    return None


def _slots(slots: dict[str, Any]) -> str:
    return f"{json.dumps(slots, ensure_ascii=False)} " if slots else ""


class Timeline:
    """Prints a line per notable event to ``out``, then passes every event on."""

    def __init__(self, inner: EventSink, out: TextIO = sys.stdout) -> None:
        self._inner = inner
        self._out = out
        self.lines: list[str] = []

    def publish_event(self, event: Event) -> None:
        """Print the event's line (if any) and pass it on."""
        self._print(event)
        self._inner.publish_event(event)

    def action(self, action: Action) -> None:
        """Print the line of an action the app carries out (if any)."""
        self._print(action)

    def _print(self, item: Event | Action) -> None:
        line = describe(item)
        if line is not None:
            stamped = f"{item.timestamp_seconds:7.2f} s  {line}"
            self.lines.append(stamped)
            print(stamped, file=self._out, flush=True)
