"""What the satellite says and does about an understood (or not understood) utterance.

The app owns it. Care intents are answered here, on the device. Home Assistant intents
are handed on as ``HaIntentRequested`` actions; HA's spoken answer comes back through
``on_response``, and when it does not come within ``ha_timeout_seconds`` a fallback is
spoken instead. It returns facts to publish (``HelpRequested``) and actions to carry out.
Pure logic: the caller passes the time in, so tests need no clock.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass

from ..actions import Action, HaIntentRequested, PlaybackControl, ReplyRequested
from ..events import Event
from ..nlu.events import HelpRequested
from ..nlu.intents import CARE_INTENTS
from ..nlu.recognizer import IntentResult

_LOGGER = logging.getLogger(__name__)

VOLUME_STEP = 10
REPLIES = {
    "help": "I'm calling for help. Someone is on the way.",
    "not_understood": "Sorry, I didn't understand that.",
    "nothing_to_repeat": "I haven't said anything yet.",
    "ha_timeout": "Sorry, Home Assistant did not answer.",
    "volume": "Volume {volume} percent.",
}


@dataclass(slots=True)
class _Pending:
    utterance_id: str
    deadline_seconds: float


class Dialogue:
    """Turns intent results and HA responses into events to act on."""

    def __init__(
        self,
        ha_timeout_seconds: float = 5.0,
        volume: int = 70,
        now: Callable[[], dt.datetime] = dt.datetime.now,
    ) -> None:
        self.ha_timeout_seconds = ha_timeout_seconds
        self.volume = volume
        self._now = now
        self._last_reply = ""
        self._pending: dict[str, _Pending] = {}

    @property
    def waiting_for(self) -> list[str]:
        """Utterance ids whose HA answer is still awaited."""
        return list(self._pending)

    def handle(
        self, result: IntentResult, utterance_id: str, at_seconds: float
    ) -> list[Event | Action]:
        """React to an understood (or not understood) utterance."""
        intent = result.intent
        if intent is None:
            return self._say(utterance_id, REPLIES["not_understood"], at_seconds)
        if intent not in CARE_INTENTS:
            self._pending[utterance_id] = _Pending(
                utterance_id, at_seconds + self.ha_timeout_seconds
            )
            return [
                HaIntentRequested(
                    timestamp_seconds=at_seconds,
                    utterance_id=utterance_id,
                    intent=intent,
                    slots=dict(result.slots),
                )
            ]
        return self._care(intent, result, utterance_id, at_seconds)

    def on_response(self, utterance_id: str, text: str, at_seconds: float) -> list[Event | Action]:
        """HA answered an intent: speak its answer (a late or unknown one is ignored)."""
        if self._pending.pop(utterance_id, None) is None:
            _LOGGER.info("Ignoring a response for %s: not waiting for it", utterance_id)
            return []
        return self._say(utterance_id, text, at_seconds) if text.strip() else []

    def tick(self, at_seconds: float) -> list[Event | Action]:
        """Speak the fallback for every HA intent whose answer is overdue."""
        events: list[Event | Action] = []
        for utterance_id, pending in list(self._pending.items()):
            if at_seconds >= pending.deadline_seconds:
                del self._pending[utterance_id]
                events.extend(self._say(utterance_id, REPLIES["ha_timeout"], at_seconds))
        return events

    # --- care intents -----------------------------------------------------------------

    def _care(
        self, intent: str, result: IntentResult, utterance_id: str, at_seconds: float
    ) -> list[Event | Action]:
        now = self._now()
        if intent == "CallForHelp":
            alert = HelpRequested(
                timestamp_seconds=at_seconds,
                utterance_id=utterance_id,
                text=result.text,
                severity="high",
            )
            return [alert, *self._say(utterance_id, REPLIES["help"], at_seconds)]
        if intent == "GetTime":
            return self._say(utterance_id, f"It's {spoken_time(now)}.", at_seconds)
        if intent == "GetDate":
            day = f"{now:%A}, {now:%B} {now.day}, {now.year}"
            return self._say(utterance_id, f"Today is {day}.", at_seconds)
        if intent == "Repeat":
            text = self._last_reply or REPLIES["nothing_to_repeat"]
            return [
                ReplyRequested(timestamp_seconds=at_seconds, utterance_id=utterance_id, text=text)
            ]
        if intent == "Stop":
            return [
                PlaybackControl(timestamp_seconds=at_seconds, action="stop", volume=self.volume)
            ]
        step = VOLUME_STEP if intent == "VolumeUp" else -VOLUME_STEP
        self.volume = max(0, min(100, self.volume + step))
        control = PlaybackControl(timestamp_seconds=at_seconds, action="volume", volume=self.volume)
        return [
            control,
            *self._say(utterance_id, REPLIES["volume"].format(volume=self.volume), at_seconds),
        ]

    def _say(self, utterance_id: str, text: str, at_seconds: float) -> list[Event | Action]:
        self._last_reply = text
        return [ReplyRequested(timestamp_seconds=at_seconds, utterance_id=utterance_id, text=text)]


def spoken_time(now: dt.datetime) -> str:
    hour = now.hour % 12 or 12
    suffix = (
        "in the morning"
        if now.hour < 12
        else ("in the afternoon" if now.hour < 18 else "in the evening")
    )
    if now.minute == 0:
        return f"{hour} o'clock {suffix}"
    return f"{hour}:{now.minute:02d} {suffix}"
