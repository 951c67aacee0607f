"""What the satellite says and does about an understood (or not understood) utterance.

The app owns it. Care intents are answered here, on the device. Home Assistant intents
are handed on as ``HaIntentRequested`` actions; HA's spoken answer comes back through
``on_response``, and when it does not come within ``ha_timeout_seconds`` a fallback is
spoken instead. It returns facts to publish (``HelpRequested``) and actions to carry out.
Pure logic: the caller passes the time in, so tests need no clock.

Precision first: a ``doubtful`` result (heard in a loud room, where noise makes some
command out of almost anything) is not acted on. The dialogue asks once more ("Sorry,
say that again", or for a call for help "Do you need help?") and listens without a wake
word (a ``ListenAgain`` action). The same request heard again within
``ANSWER_WINDOW_SECONDS`` goes out at once, doubtful or not (a call for help repeated in
any words is one; a device action heard again as a bare name, with no verb, is not the
same request: ``repeats``); a different doubtful one is not understood (it asks only once).
A request not made out at all in a noisy room comes doubtful too (nlu/trust.py
``ask_again_unheard``): it is asked for the same way, and what is then heard is judged
as a first hearing (a doubtful request is asked about once); an answer not made out
after any question is not understood, so it asks for a request at most twice.
While the help question is open (``question``, shared with understanding, which hears
its answer with a small grammar of answers: nlu/help_answers.py), the answer decides
(``answer_to_help``): "yes", "yes please", "I do" or help asked for again in any words
sends the call for help at once, confirmed; a clear "no" ("no thanks", "I'm fine",
"never mind") drops it; anything else (not understood, a doubtful "no", another
command) sends it marked ``unconfirmed``: a call for help is never lost to an answer the
satellite could not make out. Silence for the whole window sends it ``unconfirmed`` too
(someone who called faintly in a noisy room may not be able to answer).
Understanding publishes a doubtful hearing as not understood (Home Assistant acts on
intent events), so a request confirmed by a second doubtful hearing gets its
``IntentRecognized`` from here.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass

from ..actions import Action, HaIntentRequested, ListenAgain, PlaybackControl, ReplyRequested
from ..events import Event
from ..nlu.events import HelpRequested, intent_event
from ..nlu.help_answers import ANSWER_INTENTS, ANSWER_NO, ANSWER_YES, HELP, HelpQuestion
from ..nlu.intents import CARE_INTENTS, DEVICE_ACTION_INTENTS
from ..nlu.recognizer import IntentResult
from ..nlu.trust import same_request

_LOGGER = logging.getLogger(__name__)

VOLUME_STEP = 10
REPLIES = {
    "help": "I'm calling for help. Someone is on the way.",
    "not_understood": "Sorry, I didn't understand that.",
    "nothing_to_repeat": "I haven't said anything yet.",
    "ha_timeout": "Sorry, Home Assistant did not answer.",
    "volume": "Volume {volume} percent.",
    "say_again": "Sorry, say that again.",
    "confirm_help": "Do you need help? Say help again if you do.",
    "help_unanswered": "I'm letting a caregiver know, to make sure you're all right.",
    "help_declined": "Okay, I won't call anyone.",
    "help_unclear": "I didn't catch that. I'm letting a caregiver know, to make sure "
    "you're all right.",
}
#: Severity of a call for help that was asked about and never answered.
UNCONFIRMED = "unconfirmed"
#: After asking once more, the answer counts for this long, s (the question is spoken
#: first, then the person answers).
ANSWER_WINDOW_SECONDS = 12.0
#: An answer still being heard when the window ends counts until this long after it
#: was last heard, s (its decision follows the end of speech).
HEARD_GRACE_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class _Asked:
    """What the dialogue asked about: the doubtful result, and until when an answer counts."""

    result: IntentResult
    utterance_id: str
    until_seconds: float


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
        question: HelpQuestion | None = None,
    ) -> None:
        """``question``: open while this dialogue waits for an answer to the help
        question (share understanding's, so it hears the answer with the answers'
        grammar)."""
        self.ha_timeout_seconds = ha_timeout_seconds
        self.question = question or HelpQuestion()
        self.volume = volume
        self._now = now
        self._last_reply = ""
        self._pending: dict[str, _Pending] = {}
        self._asked: _Asked | None = None

    @property
    def waiting_for(self) -> list[str]:
        """Utterance ids whose HA answer is still awaited."""
        return list(self._pending)

    @property
    def asking(self) -> bool:
        """Whether it asked once more and waits for the answer (see ``handle``)."""
        return self._asked is not None

    def handle(
        self, result: IntentResult, utterance_id: str, at_seconds: float, doubtful: bool = False
    ) -> list[Event | Action]:
        """React to an understood (or not understood) utterance; a ``doubtful`` one is
        asked about once more instead of acted on."""
        asked = self._ask(None)
        if asked is not None and asked.result.intent == HELP:  # (no lapse: see ``tick``)
            return self._answer_help(asked, result, utterance_id, at_seconds, doubtful)
        if asked is not None and at_seconds > asked.until_seconds:
            asked = None
        intent = result.intent
        if intent is None or intent in ANSWER_INTENTS:  # an answer, with no question
            if intent is None and doubtful and asked is None:  # not made out in a noisy room
                return self._ask_once_more(result, utterance_id, at_seconds)
            return self._say(utterance_id, REPLIES["not_understood"], at_seconds)
        if asked is not None and repeats(asked.result, result):
            if doubtful:  # heard twice: it goes out at once, published from here
                recognized = intent_event(result, utterance_id, at_seconds)
                return [recognized, *self.handle(result, utterance_id, at_seconds)]
        elif doubtful and asked is not None and asked.result.intent is not None and intent != HELP:
            # asked about once already (help is asked about, and so is a request heard
            # after one not made out: it was not asked about yet)
            return self._say(utterance_id, REPLIES["not_understood"], at_seconds)
        if doubtful:
            return self._ask_once_more(result, utterance_id, at_seconds)
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

    def tick(self, at_seconds: float, hearing: bool = False) -> list[Event | Action]:
        """Speak the fallback for every HA intent whose answer is overdue; a question
        about help that met only silence goes out as an unconfirmed call for help.
        ``hearing``: someone may be speaking now; an answer under way keeps the
        question open until it has been heard."""
        events: list[Event | Action] = []
        asked = self._asked
        if asked is not None and at_seconds > asked.until_seconds and hearing:
            self._ask(_Asked(asked.result, asked.utterance_id, at_seconds + HEARD_GRACE_SECONDS))
        elif asked is not None and at_seconds > asked.until_seconds:
            self._ask(None)
            if asked.result.intent == HELP:
                _LOGGER.warning("Nobody answered whether help is needed: alerting anyway")
                events += self._unconfirmed(asked, at_seconds, REPLIES["help_unanswered"])
        for utterance_id, pending in list(self._pending.items()):
            if at_seconds >= pending.deadline_seconds:
                del self._pending[utterance_id]
                events.extend(self._say(utterance_id, REPLIES["ha_timeout"], at_seconds))
        return events

    def close(self, at_seconds: float) -> list[Event | Action]:
        """The satellite stops (its input ended, or it shuts down) with the help question
        still open: the call goes out now, unconfirmed, never lost with the process."""
        asked = self._ask(None)
        if asked is None or asked.result.intent != HELP:
            return []
        _LOGGER.warning("Stopping before anyone answered whether help is needed: alerting")
        return self._unconfirmed(asked, at_seconds, REPLIES["help_unanswered"])

    def _ask_once_more(
        self, result: IntentResult, utterance_id: str, at_seconds: float
    ) -> list[Event | Action]:
        """Ask about ``result`` (no intent: a request not made out, asked for again) and
        listen for the answer without the wake word."""
        self._ask(_Asked(result, utterance_id, at_seconds + ANSWER_WINDOW_SECONDS))
        question = REPLIES["confirm_help" if result.intent == HELP else "say_again"]
        _LOGGER.info("Doubtful %s (%r): asking once more", result.intent, result.text)
        return [
            *self._say(utterance_id, question, at_seconds),
            ListenAgain(timestamp_seconds=at_seconds, utterance_id=utterance_id),
        ]

    # --- the help question --------------------------------------------------------------

    def _ask(self, asked: _Asked | None) -> _Asked | None:
        """Ask about ``asked`` (None: nothing); the question asked before, if any."""
        before, self._asked = self._asked, asked
        self.question.open = asked is not None and asked.result.intent == HELP
        # what is to be said again: not a request not made out, nor help (its question)
        repeat = asked.result if asked is not None and asked.result.intent is not None else None
        self.question.asked = None if self.question.open else repeat
        return before

    def _answer_help(
        self, asked: _Asked, answer: IntentResult, utterance_id: str, at: float, doubtful: bool
    ) -> list[Event | Action]:
        """The help question answered: see ``answer_to_help``."""
        verdict = answer_to_help(answer, doubtful)
        _LOGGER.info("Asked whether help is needed: %r, %s", answer.text, verdict)
        if verdict == "no":
            return self._say(utterance_id, REPLIES["help_declined"], at)
        if verdict == "unclear":
            return self._unconfirmed(asked, at, REPLIES["help_unclear"])
        confirmed = IntentResult(HELP, {}, answer.confidence, answer.source, answer.text)
        events: list[Event | Action] = []
        if doubtful or answer.intent != HELP:  # understanding published it as not understood
            events.append(intent_event(confirmed, utterance_id, at))
        return events + self._care(HELP, confirmed, utterance_id, at)

    def _unconfirmed(self, asked: _Asked, at: float, reply: str) -> list[Event | Action]:
        """The call for help ``asked`` about sent on, marked unconfirmed."""
        alert = HelpRequested(
            timestamp_seconds=at,
            utterance_id=asked.utterance_id,
            text=asked.result.text,
            severity=UNCONFIRMED,
        )
        return [alert, *self._say(asked.utterance_id, reply, at)]

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


def answer_to_help(answer: IntentResult, doubtful: bool) -> str:
    """What an answer to the help question means: ``yes`` (help is wanted: "yes", "I
    do", help again in any words, however doubtful), ``no`` (a "no" heard clearly, not
    ``doubtful``), or ``unclear`` (anything else, a doubtful "no" among it: the call goes
    out unconfirmed, never lost). Help the LLM reads into an answer with no word of help
    or distress in it (``IntentResult.unmistakable``) is unclear, not a yes: it read
    eSpeak's "no", in babble, transcribed "i had it", as help (0.56)."""
    if answer.intent == ANSWER_YES or (answer.intent == HELP and answer.unmistakable):
        return "yes"
    if answer.intent == ANSWER_NO and not doubtful:
        return "no"
    return "unclear"


def repeats(asked: IntentResult, answer: IntentResult) -> bool:
    """Whether ``answer`` asks for what was asked about: the same request, or help again.
    A device action heard again as a bare name, with no verb, is not: the noise or the
    call for help forced into a name once is forced into it again (eSpeak's "I can't
    move my arm" is heard as "i'd like to my hall blue" each time); said with its verb,
    it is."""
    if asked.intent == "CallForHelp":
        return answer.intent == "CallForHelp"
    if answer.bare and answer.intent in DEVICE_ACTION_INTENTS:
        return False
    return same_request(asked, answer)


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
