"""A stand-in for Home Assistant, for the demo and for runs with no broker.

It answers each intent meant for Home Assistant (what HA would find on ``intent``: an
``IntentRecognized`` whose intent is not one of ours) the way HA's default intent
handlers speak ("Turned on the kitchen light"), by putting a ``SpokenResponse`` into the
app's inbox, the path a real answer takes over MQTT. It carries nothing out: it never stands
in for a real home, and ``run`` refuses it when MQTT is on.
"""

from __future__ import annotations

import queue
from typing import Any

from .app_contract import EventSink
from .events import Event
from .mqtt.payloads import Command, SpokenResponse
from .nlu.events import IntentRecognized
from .nlu.intents import CARE_INTENTS

#: What the stand-in says per intent; {target} is the name or area the command named.
ANSWERS = {
    "HassTurnOn": "Turned on {target}.",
    "HassTurnOff": "Turned off {target}.",
    "HassLightSet": "Brightness set for {target}.",
    "HassGetState": "{target} is off.",
    "HassStartTimer": "Timer started.",
    "HassNevermind": "",
}
DEFAULT_ANSWER = "Done."


def answer_for(intent: str, slots: dict[str, Any]) -> str:
    """What Home Assistant would say after carrying out ``intent`` with ``slots``."""
    name = slots.get("name") or slots.get("area")
    target = f"the {name}" if isinstance(name, str) and name else "it"
    text = ANSWERS.get(intent, DEFAULT_ANSWER).format(target=target)
    return text[:1].upper() + text[1:]


class StandInHomeAssistant:
    """Wraps an event sink; answers Home Assistant's intents into ``inbox``."""

    def __init__(self, inner: EventSink, inbox: queue.Queue[Command]) -> None:
        self._inner = inner
        self._inbox = inbox
        #: Answers given, (utterance id, text), in order.
        self.answered: list[tuple[str, str]] = []

    def publish_event(self, event: Event) -> None:
        """Pass the event on; answer it when it is meant for Home Assistant."""
        self._inner.publish_event(event)
        if (
            isinstance(event, IntentRecognized)
            and event.intent is not None
            and event.intent not in CARE_INTENTS
        ):
            text = answer_for(event.intent, event.slots)
            self.answered.append((event.utterance_id, text))
            self._inbox.put(SpokenResponse(event.utterance_id, text))
