"""Understanding in the frame loop: streaming STT, early endpoint, intent.

The recognizer hears the utterance while it is spoken (pre-roll included). When the
trailing silence reaches ``early_endpoint_seconds`` and what was heard is already a
whole command, scored ``early_endpoint_margin`` above what it needs, the utterance ends
there instead of after the full silence timeout (a pause is not always the end: the
first half of a sentence often fits some short command).
A result the streaming search does not trust (at that pause, or at the end) gives way to
the utterance searched again from its own cepstral mean, if that one is trusted (in a
quiet room). In-domain results go through the templates at once; out-of-domain speech
goes to the fallback worker (open transcription, then the LLM) and comes back through
``poll``. A follow-on utterance (heard after another with no wake word, from the start
of that one: see frontend/recorder.py) needs ``follow_on_margin`` more score, as the
grammar lays words over the pause inside it. It is owed no answer when it is not
understood (it may not have been meant for the satellite) or understood as the utterance
before it was (the person only went on after a pause: that was already done). Every
other understood (or not understood) utterance gives an ``AnswerDue`` action, which the
app hands to its dialogue. A complete, sure command closes the follow-on window at once
(see ``Answers.sure``), so its answer need not wait for it.

The parts: stt/session.py hears the utterance and judges its room, belief.py decides
whether a result is believed (by the rules in nlu/trust.py) and nlu/fallback.py keeps the
fallback's jobs. ``Understanding`` drives them from the recorder's events and reports
each utterance. Their work (searches, and decisions on what they heard) is queued in
order and done a few steps per frame (``advance``), not in bursts that hold up the loop.
An utterance that begins while the help question is open (``question``, opened and
closed by the dialogue) is heard with the answers' grammar and templates
(nlu/help_answers.py) when the recognizer has them.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from ..actions import Action
from ..audio.chunk import AudioChunk
from ..events import Event, SpeechStarted, UtteranceEnded
from ..frontend.recorder import Phase, UtteranceRecorder
from ..nlu.fallback import FallbackJobs
from ..nlu.help_answers import HelpQuestion
from ..nlu.llm import LlmFallback
from ..nlu.recognizer import TemplateRecognizer
from ..prosody.monitor import ProsodyMonitor
from ..stt.base import SpeechRecognizer
from ..stt.hearing import MicHistory
from ..stt.session import HearingSession, words_in_speech
from ..stt.settings import SttSettings
from ..stt.steps import Steps
from ..timing import ms_since
from .answers import Answers, note_searches, transcript_of
from .belief import Belief
from .early_check import EarlyCheck
from .report import UtteranceReport

EARLY_ENDPOINT_REASON = "early_endpoint"
#: Silence after the speech that a second hearing searches, s (the search reaches the
#: grammar's end within it; more only costs time).
SECOND_HEARING_TAIL_SECONDS = 0.3


class Understanding:
    """Drives a SpeechRecognizer from recorder events and turns results into intents."""

    name = "understanding"

    def __init__(
        self,
        recognizer: SpeechRecognizer,
        templates: TemplateRecognizer,
        fallback: LlmFallback | None = None,
        open_transcribe: Callable[[AudioChunk], str] | None = None,
        settings: SttSettings | None = None,
    ) -> None:
        self.settings = settings or SttSettings()
        self.hearing = HearingSession(recognizer, self.settings)
        self.belief = Belief(self.hearing, templates, self.settings)
        self.early = EarlyCheck(self.hearing, self.belief, self.settings)
        jobs = FallbackJobs(fallback, open_transcribe, templates) if fallback is not None else None
        self.question = HelpQuestion()  # what the dialogue asked and awaits an answer to
        self.answers = Answers(self.settings, jobs, self.question)
        self.early_endpoint_seconds = self.settings.early_endpoint_ms / 1000.0
        #: Speech rate per utterance, fed the recognised words (set by the builder).
        self.prosody: ProsodyMonitor | None = None
        self._checked_silence = False
        self._listening = False
        #: Events concluded by work done (see ``advance``).
        self._ready: list[Event] = []
        #: A pause has been decided to end the utterance (see ``_pause_steps``).
        self._end_early = False
        #: Which pause may still end the utterance (any other decided later may not).
        self._pause_token = 0
        #: The utterance decided last was a complete, sure command (``Answers.sure``).
        self._complete = False

    @property
    def recognizer(self) -> SpeechRecognizer:
        """The recognizer that hears the utterances (see ``replace_recognizer``)."""
        return self.hearing.recognizer

    @property
    def templates(self) -> TemplateRecognizer:
        """The templates that read the recognizer's results."""
        return self.belief.templates

    @property
    def fallback(self) -> LlmFallback | None:
        """The LLM that out-of-domain utterances go to, if any."""
        return self.answers.jobs.fallback if self.answers.jobs is not None else None

    @property
    def reports(self) -> dict[str, UtteranceReport]:
        """What is known about the latest utterances, by id."""
        return self.answers.reports

    @property
    def busy(self) -> bool:
        """Whether recognition work or its conclusions wait for ``advance``."""
        return self.hearing.busy or bool(self._ready) or self._end_early

    @property
    def settled(self) -> bool:
        """Whether nothing is being worked out (``busy``) or still to come from the LLM."""
        return not self.busy and (self.answers.jobs is None or not len(self.answers.jobs))

    def observe(
        self,
        frame: AudioChunk,
        new_events: list[Event],
        recorder: UtteranceRecorder,
        mic: MicHistory | None = None,
    ) -> list[Event]:
        """Called for every frame the recorder saw, with the events it just produced. The
        work is queued (``advance`` does it, and gives what it concluded): nothing is
        returned here."""
        started = [e for e in new_events if isinstance(e, SpeechStarted)]
        if started:
            self._pause_token += 1
            following_on, answer = recorder.following_on, self.question.open
            self.early.begin(started[-1].timestamp_seconds, following_on)
            self.hearing.queue(self._begin_steps(started[-1].utterance_id, following_on, answer))
            self.hearing.start(frame, recorder.frames, recorder.continuous or recorder.asked, mic)
            self._listening = True
            self._checked_silence = False
        elif self._listening and recorder.phase is Phase.IN_SPEECH:
            self.hearing.hear(frame, mic)
            self._maybe_end_early(frame, recorder)
        self._on_ended(new_events)
        return []

    def advance(self, frame: AudioChunk, recorder: UtteranceRecorder) -> list[Event]:
        """Do up to ``stt.steps_per_frame`` steps of the work waiting (once per frame, after
        ``observe``); return what it concluded: the utterance ended early, then each
        decided one's transcript, speech rate and intent."""
        budget = self.settings.steps_per_frame
        done = self.hearing.work.advance(budget)
        out = self._end_if_decided(frame, recorder)
        if out:  # its decision in this frame's turn too, if the budget allows
            self.hearing.work.advance(max(1, budget - done))
        return out + self._take_ready(recorder)

    def catch_up(self, frame: AudioChunk, recorder: UtteranceRecorder) -> list[Event]:
        """Do all the work waiting now (the input ended); return what it concluded."""
        out: list[Event] = []
        while self.hearing.busy or self._end_early:
            self.hearing.catch_up()
            out += self._end_if_decided(frame, recorder)
        return out + self._take_ready(recorder)

    def _end_if_decided(self, frame: AudioChunk, recorder: UtteranceRecorder) -> list[Event]:
        """End the utterance at ``frame`` if a pause has been decided to end it."""
        if not self._end_early:
            return []
        self._end_early = False
        ended = recorder.end_now(frame.end_seconds, EARLY_ENDPOINT_REASON)
        self._on_ended(ended)
        return ended

    def _on_ended(self, events: list[Event]) -> None:
        """Queue the decision of the utterance that ended, if one did."""
        for event in events:
            if isinstance(event, UtteranceEnded) and self._listening:
                self._listening = False
                self._pause_token += 1
                self.hearing.queue(self._understand_steps(event), keep=True)

    def _take_ready(self, recorder: UtteranceRecorder | None = None) -> list[Event]:
        """What the work concluded; a complete command closes ``recorder``'s window."""
        if self._complete and recorder is not None:
            recorder.close_follow_on()  # (a follow-on already begun goes on)
        self._complete = False
        ready, self._ready = self._ready, []
        return ready

    def _begin_steps(self, utterance_id: str, following_on: bool, answer: bool) -> Steps[None]:
        """A new utterance (once the one before it is decided; ``answer``: ``Belief.begin``)."""
        self.belief.begin(answer)
        if following_on:  # it went on from the utterance reported last
            self.answers.went_on(utterance_id)
        return
        yield

    def _maybe_end_early(self, frame: AudioChunk, recorder: UtteranceRecorder) -> None:
        silence = recorder.quiet_since(frame.end_seconds)
        self.early.on_frame(frame.end_seconds, silence)  # the checks begun early
        if silence <= 0:
            if self._checked_silence:  # speech again after a pause that did not end it
                self._pause_token += 1  # (nor will it, if still being decided)
                self.hearing.queue(self.hearing.resume_steps())
            self._checked_silence = False
            return
        early = self.early_endpoint_seconds
        if early <= 0 or self._checked_silence or silence < early:
            return
        self._checked_silence = True
        self.hearing.queue(self._pause_steps(frame.end_seconds, silence, self._pause_token))

    def _pause_steps(self, now: float, silence: float, token: int) -> Steps[None]:
        """Whether the utterance ends at the pause ``silence`` long at ``now``: when what
        was heard is a whole command, believed with the early endpoint's margin."""
        yield from self.hearing.judge_room_steps(now)
        if (heard := self.recognizer.pause()) is None:
            return
        yield from self.early.settle_steps(heard)  # (a guess on it done, if it is to be used)
        margin = self.settings.early_endpoint_margin
        believed = yield from self.belief.believe_steps(heard, now, margin)
        if not believed.trusted or not words_in_speech(believed.stt, now - silence):
            return
        self._end_early = token == self._pause_token  # the person has not gone on

    def understand(self, utterance: UtteranceEnded) -> list[Event]:
        """Decide an utterance that has ended, at once (after the work waiting before
        it): what was heard (its transcript and speech rate) and, at once or later
        through ``poll``, its intent and the reply; and whatever else the work waiting
        concluded, before it."""
        self.hearing.queue(self._understand_steps(utterance), keep=True)
        self.hearing.catch_up()
        return self._take_ready()

    def _understand_steps(self, utterance: UtteranceEnded) -> Steps[None]:
        """``understand``, its searches a step at a time; its events go to ``_ready``."""
        report = self.answers.report(utterance)
        started = time.perf_counter()
        yield from self.hearing.judge_room_steps(utterance.timestamp_seconds)
        report.judged(self.hearing)
        streamed = self.recognizer.finish()
        report.timings_ms["stt_finish"] = ms_since(started)
        yield from self.early.settle_steps(streamed)
        started = time.perf_counter()
        self.belief.read(streamed)
        report.timings_ms["nlu"] = ms_since(started)
        yield  # the templates may take a while over a long sentence
        heard_until = min(
            utterance.timestamp_seconds, utterance.end_seconds + SECOND_HEARING_TAIL_SECONDS
        )
        following_on = utterance.utterance_id in self.answers.follow_ons
        margin = self.settings.follow_on_margin if following_on else 0.0
        believed = yield from self.belief.believe_steps(streamed, heard_until, margin, True)
        yield  # and speech rate is measured over the whole utterance
        note_searches(report, self.belief.record, streamed, believed.stt)
        stt = dataclasses.replace(
            believed.stt, in_grammar=believed.trusted, confidence=self.belief.confidence(believed)
        )
        report.stt = stt
        events: list[Event] = [transcript_of(utterance, stt)]
        if self.prosody is not None and utterance.audio is not None:
            # Words from a grammar forced onto out-of-domain speech are not trusted.
            words = stt.words if stt.in_grammar else None
            events.extend(self.prosody.process(utterance, words=words))
        self._ready += events + self.answers.settle(
            utterance, stt, believed.result, believed.trusted
        )
        self._complete = utterance.reason == EARLY_ENDPOINT_REASON and self.answers.sure(
            utterance.utterance_id, self.settings.answer_at_once_confidence
        )

    def poll(self, now_seconds: float, wait_seconds: float = 0.0) -> list[Event]:
        """Collect fallback results that are ready (waiting up to ``wait_seconds``)."""
        events: list[Event] = []
        if wait_seconds > 0:  # decide what is heard first
            self.hearing.catch_up()
            events += self._take_ready()
        return events + self.answers.collect(now_seconds, wait_seconds, self.hearing.loud)

    def take_actions(self) -> list[Action]:
        """The answers owed since the last call (``AnswerDue``), in order."""
        return self.answers.take_actions()

    def replace_recognizer(
        self, recognizer: SpeechRecognizer, templates: TemplateRecognizer
    ) -> bool:
        """Use a recognizer and templates built for new slot lists (names and areas), only
        between utterances: returns False while one is being heard (try again)."""
        if self._listening or self.busy:
            return False
        self.recognizer.reset()
        self.hearing.recognizer = recognizer
        self.belief.templates = templates
        return True

    def reset(self) -> None:
        """Drop the utterance in progress (the ones heard before it are decided first;
        their events come out at the next ``advance``)."""
        self.hearing.work.drop()
        self.early.reset()
        self.recognizer.reset()
        self._listening = False
        self._checked_silence = False
        self._end_early = False
        self._pause_token += 1
        self.answers.forget_follow_ons()
