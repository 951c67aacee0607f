"""Enrolment by voice, as the app runs it (frame loop thread; see
satellite/enrol/prompted.py for what is asked and kept).

While an enrolment is under way, what the person says back is a take, not a command:
the intents of those utterances are neither published nor answered (Home Assistant acts
on intent events). Two things still are: a call for help (it ends the enrolment and goes
on as any call: a call for help is never lost to an enrolment) and a sure "stop" or
"never mind" (it ends the enrolment). The adaptation runs in a worker thread; the frame
loop publishes its outcome and says it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .actions import Action, AnswerDue, HaIntentRequested
from .app_contract import EventSink, FrameProcessor, SpeakJob
from .audio.chunk import AudioChunk, to_pipeline_format
from .enrol.adapt import Enrolment, enrol
from .enrol.prompted import (
    ALL_SAID,
    CANCELLED,
    DEFAULT_PROMPTS,
    INTRO,
    LEARNT,
    MIN_KEPT,
    NOT_LEARNT,
    PromptedEnrolment,
    raw_take,
)
from .errors import SatelliteError
from .events import EnrolmentChanged, Event, ListeningTimeout, SpeechStarted, UtteranceEnded
from .mqtt.payloads import EnrolRequest
from .nlu.events import IntentRecognized
from .nlu.help_answers import HELP
from .queues import drain
from .while_speaking import STOPPING

_LOGGER = logging.getLogger(__name__)
#: Intents that end an enrolment when heard sure in one of its takes (those that stop a
#: reply: "stop", "never mind").
ENDING_INTENTS = STOPPING


@dataclass(frozen=True)
class EnrolPlace:
    """Where enrolments by voice are stored and in which language they are heard."""

    speakers_dir: str
    language: str = "en"
    #: A take is the microphone's audio, as a recording for the CLI is (False: the audio
    #: after the front end, as the recognizer hears it first).
    raw_takes: bool = True


class EnrolHandling:
    """SatelliteApp's side that runs an enrolment by voice (see above)."""

    pipeline: FrameProcessor
    events: EventSink
    _listen_after_reply: bool
    _now: float
    muted: bool
    #: Where enrolments go (None: enrolment by voice is not offered).
    enrol_place: EnrolPlace | None = None
    #: The enrolment under way, until its takes are all heard.
    enrolment: PromptedEnrolment | None = None
    #: Utterances heard as takes (their intents are not commands).
    _takes: set[str]
    #: The adaptation's outcome, from its worker thread (an Enrolment, or why it failed).
    _adapted: queue.Queue[tuple[PromptedEnrolment, Enrolment | str]]
    _adapting: threading.Thread | None = None

    def _say(self, job: SpeakJob) -> None:
        raise NotImplementedError

    def _stop_speaking(self) -> None:
        raise NotImplementedError

    def _init_enrol(self, place: EnrolPlace | None) -> None:
        self.enrol_place = place
        self._takes = set()
        self._adapted = queue.Queue()
        self._raw: list[AudioChunk] = []

    def _heard(self, source: Iterable[AudioChunk]) -> Iterator[AudioChunk]:
        """``source`` as the frame loop takes it; while an enrolment is under way, the
        microphone's audio is kept for the takes (``EnrolPlace.raw_takes``)."""
        for chunk in source:
            place = self.enrol_place
            if self.enrolment is not None and place is not None and place.raw_takes:
                self._raw.append(to_pipeline_format(chunk))
            yield chunk

    def _enrol(self, command: EnrolRequest) -> None:
        """Start or cancel an enrolment by voice."""
        if command.action == "cancel":
            if self.enrolment is not None:
                self._end_enrolment("cancelled", CANCELLED)
            return
        assert command.speaker is not None  # (the payload checks it)
        busy = self.enrolment is not None or self._adapting is not None
        why = "" if not busy else "an enrolment is under way. Fix: cancel it first, or wait"
        place = self.enrol_place
        if self.muted:
            why = "the microphone is muted. Fix: unmute the satellite, then start again"
        if place is None:
            why = "enrolment by voice needs stt.engine pocketsphinx (its model is adapted)"
        if why or place is None:
            _LOGGER.warning("Enrolment of %s not started: %s", command.speaker, why)
            self.events.publish_event(_refused(command, why, self._now))
            return
        count = command.prompts or DEFAULT_PROMPTS
        try:
            session = PromptedEnrolment.start(command.speaker, place.speakers_dir, count)
        except (OSError, SatelliteError) as err:
            self.events.publish_event(_refused(command, f"cannot keep the takes: {err}", self._now))
            return
        self.enrolment = session
        self._takes = set()
        _LOGGER.info("Enrolment of %s by voice: %d prompts", session.speaker, count)
        self._ask(INTRO + " ")

    def _ask(self, before: str = "") -> None:
        """Say the current prompt and listen for its take once it is said."""
        session = self.enrolment
        assert session is not None
        self._say(SpeakJob(before + session.ask()))
        self._listen_after_reply = True
        self.events.publish_event(session.event("prompting", self._now))

    def _enrol_filter(
        self, events: list[Event], actions: list[Action]
    ) -> tuple[list[Event], list[Action]]:
        """``events`` and ``actions`` less the enrolment's takes' intents and answers."""
        session = self.enrolment
        if session is not None:
            for event in events:
                if isinstance(event, SpeechStarted):
                    self._takes.add(event.utterance_id)
        if not self._takes and session is None:
            return events, actions
        help_heard = any(
            isinstance(a, AnswerDue) and a.result.intent == HELP and a.utterance_id in self._takes
            for a in actions
        )
        if help_heard:  # a call for help is never lost to an enrolment
            self._takes.clear()
            if self.enrolment is not None:
                self._end_enrolment("cancelled", "", error="a call for help was heard")
            return events, actions
        ending = any(
            isinstance(a, AnswerDue)
            and a.result.intent in ENDING_INTENTS
            and not a.doubtful
            and a.utterance_id in self._takes
            for a in actions
        )
        events = [e for e in events if not _a_take(e, self._takes)]
        kept = [a for a in actions if not _a_take(a, self._takes)]
        if ending and self.enrolment is not None:
            self._end_enrolment("cancelled", CANCELLED)
        elif session is not None and self.enrolment is session:
            self._enrol_heard(events)
        return events, kept

    def _enrol_heard(self, events: list[Event]) -> None:
        """A take heard, or none in time: keep it and ask for the next prompt."""
        session = self.enrolment
        assert session is not None
        for event in events:
            if isinstance(event, UtteranceEnded) and event.utterance_id in self._takes:
                self.pipeline.end_follow_on()  # (the next prompt is said at once)
                audio, self._raw = raw_take(event.audio, self._raw)
                try:
                    session.heard(audio, event.duration_seconds)
                except OSError as err:  # (a full disk: said, and nothing else lost)
                    self._end_enrolment("failed", NOT_LEARNT, error=f"cannot keep a take: {err}")
                    return
            elif isinstance(event, ListeningTimeout):
                self._raw = []
                session.heard(None, 0.0)
            else:
                continue
            if not session.finished:
                self._ask()
                return
            self._adapt(session)
            return

    def _adapt(self, session: PromptedEnrolment) -> None:
        """Every prompt asked: adapt to the takes in a worker thread."""
        self.enrolment, self._raw = None, []
        if len(session.kept) < MIN_KEPT:
            why = (
                f"only {len(session.kept)} of {len(session.sentences)} sentences were heard "
                f"(at least {MIN_KEPT} are needed). Fix: enrol again somewhere quiet, "
                "saying each sentence after the satellite"
            )
            self._finish(session, why)
            return
        self._say(SpeakJob(ALL_SAID))
        self.events.publish_event(session.event("adapting", self._now))
        place = self.enrol_place
        assert place is not None
        worker = threading.Thread(
            target=self._adapt_in_worker,
            args=(session, place),
            name="enrol-adapt",
            daemon=True,
        )
        self._adapting = worker
        worker.start()

    def _adapt_in_worker(self, session: PromptedEnrolment, place: EnrolPlace) -> None:
        try:
            done = enrol(session.speaker, session.kept, place.speakers_dir, place.language)
        except Exception as err:  # noqa: BLE001 (reported, not lost)
            _LOGGER.warning("Enrolment of %s failed: %s", session.speaker, err)
            self._adapted.put((session, str(err)))
        else:
            self._adapted.put((session, done))

    def _enrol_poll(self) -> None:
        """Publish and say an adaptation's outcome (frame loop thread)."""
        for session, outcome in drain(self._adapted):
            self._adapting = None
            self._finish(session, outcome)

    def _finish(self, session: PromptedEnrolment, outcome: Enrolment | str) -> None:
        if isinstance(outcome, str):
            self._say(SpeakJob(NOT_LEARNT))
            self.events.publish_event(session.event("failed", self._now, outcome))
            return
        _LOGGER.info(
            "Enrolled %s by voice: %d takes used, %d left out -> %s (select it with "
            "stt.speaker: %s and restart)",
            outcome.speaker,
            len(outcome.used),
            len(outcome.ignored),
            Path(outcome.mllr_path).parent,
            outcome.speaker,
        )
        self._say(SpeakJob(LEARNT))
        self.events.publish_event(session.event("done", self._now))

    def _end_enrolment(self, state: str, say: str, error: str = "") -> None:
        """End the enrolment under way (its takes are kept on disk, nothing adapted)."""
        session = self.enrolment
        assert session is not None
        self.enrolment, self._raw = None, []
        self._listen_after_reply = False
        self._stop_speaking()
        if say:
            self._say(SpeakJob(say))
        self.events.publish_event(session.event(state, self._now, error))

    def _enrol_muted(self) -> None:
        """The microphone was muted: no take can be heard, so the enrolment ends."""
        if self.enrolment is not None:
            self._end_enrolment("cancelled", "", error="the microphone was muted")

    def _enrol_close(self, timeout: float) -> None:
        """Let an adaptation under way finish (the app is closing)."""
        worker = self._adapting
        if worker is not None:
            worker.join(timeout)
            self._enrol_poll()


def _a_take(item: Event | Action, takes: set[str]) -> bool:
    """Whether ``item`` is a take's intent or answer (not published, not carried out)."""
    if isinstance(item, IntentRecognized | AnswerDue | HaIntentRequested):
        return item.utterance_id in takes
    return False


def _refused(command: EnrolRequest, why: str, at: float) -> EnrolmentChanged:
    """The ``enrolment`` event of a start refused for ``why``."""
    speaker = command.speaker or ""
    return EnrolmentChanged(round(at, 3), speaker, "failed", 0, 0, 0, error=why)
