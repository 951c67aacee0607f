"""The answers owed for decided utterances: their intent events and ``AnswerDue``
actions, the fallback's jobs, the reports, and the follow-ons let pass without a word."""

from __future__ import annotations

import dataclasses

from ..actions import Action, AnswerDue
from ..events import Event, UtteranceEnded
from ..nlu import trust
from ..nlu.events import Transcript, intent_event
from ..nlu.fallback import FallbackJobs
from ..nlu.help_answers import ANSWER_INTENTS, HelpQuestion
from ..nlu.intents import NOT_A_COMMAND
from ..nlu.recognizer import IntentResult
from ..stt.base import SttResult
from ..stt.settings import SttSettings
from .believed import UtteranceRecord
from .dialogue import repeats
from .report import UtteranceReport

#: Reports kept, of the latest utterances.
REPORTS_KEPT = 64


class Answers:
    """What each decided utterance is owed, at once or when the fallback has it."""

    def __init__(
        self, settings: SttSettings, jobs: FallbackJobs | None, question: HelpQuestion
    ) -> None:
        self.settings = settings
        self.jobs = jobs
        #: What the dialogue asked about (``repeats_asked``).
        self.question = question
        self.reports: dict[str, UtteranceReport] = {}
        #: Follow-on utterances not yet concluded, and the utterance each went on from.
        self.follow_ons: dict[str, str] = {}
        self._actions: list[Action] = []

    def report(self, utterance: UtteranceEnded) -> UtteranceReport:
        """A new report for ``utterance`` (the oldest are let go)."""
        report = UtteranceReport(
            utterance.utterance_id, utterance.start_seconds, utterance.end_seconds, utterance.reason
        )
        self.reports[utterance.utterance_id] = report
        while len(self.reports) > REPORTS_KEPT:
            del self.reports[next(iter(self.reports))]
        return report

    def went_on(self, utterance_id: str) -> None:
        """``utterance_id`` went on from the utterance reported last (a follow-on)."""
        self.follow_ons[utterance_id] = next(reversed(self.reports), "")

    def settle(
        self, utterance: UtteranceEnded, stt: SttResult, result: IntentResult, trusted: bool
    ) -> list[Event]:
        """Its intent at once, or through ``collect`` when the fallback works it out."""
        utterance_id, now = utterance.utterance_id, utterance.timestamp_seconds
        if (trusted or self.repeats_asked(utterance_id, result)) and result.intent is not None:
            result = dataclasses.replace(result, confidence=stt.confidence)
            return self.conclude(utterance_id, result, now)
        if self.jobs is not None and utterance.audio is not None:
            timings = self.reports[utterance_id].timings_ms
            self.jobs.submit(utterance_id, utterance.audio, stt.text, timings)
            return []
        return self.conclude(utterance_id, IntentResult(None, text=stt.text), now)

    def repeats_asked(self, utterance_id: str, result: IntentResult) -> bool:
        """Whether ``result``, read from a hearing of ``utterance_id`` not trusted, is
        the request the dialogue asked to hear again ("Sorry, say that again":
        ``HelpQuestion.asked``) among other voices, and is believed for it
        (``stt.believe_repeats``). There the second take was often the right words with
        the others' in them, scored too low for them ("i'd like to turn off the
        television i'd like to" with people talking 20 dB below); two takes that come to
        the same request are more than either alone. Not in a steady room, where a low
        score is the words' own: out-of-domain speech said twice came out the same
        forced command twice ("can you sing me a song" as "can you study lights on" in
        white noise) and switched a device. The dialogue still decides
        (dialogue.repeats: not a bare name, not a call for help, which is confirmed by
        the answers' grammar)."""
        asked = self.question.asked
        report = self.reports.get(utterance_id)
        return (
            self.settings.believe_repeats
            and asked is not None
            and report is not None
            and report.voices
            and repeats(asked, result)  # (the same intent: never help, which is not asked)
        )

    def collect(self, now_seconds: float, wait_seconds: float, loud: bool) -> list[Event]:
        """The fallback's results that are ready (waiting up to ``wait_seconds``; ``loud``:
        see ``conclude``)."""
        events: list[Event] = []
        if self.jobs is not None:
            for utterance_id, result in self.jobs.collect(wait_seconds):
                events.extend(self.conclude(utterance_id, result, now_seconds, loud))
        return events

    def take_actions(self) -> list[Action]:
        """The answers owed since the last call (``AnswerDue``), in order."""
        actions, self._actions = self._actions, []
        return actions

    def conclude(
        self, utterance_id: str, result: IntentResult, now: float, loud: bool = False
    ) -> list[Event]:
        """The intent event and the answer owed (``doubtful``: the dialogue asks once
        more, also for a request not made out in a noisy room, ``trust.ask_again_unheard``;
        the app publishes its intent event as not understood, see app.py); ``loud``
        the room, if the utterance has no report; a thing said that is no command
        (``NOT_A_COMMAND``, see belief.py) is not understood: nothing to do or ask)."""
        no_command = result.intent == NOT_A_COMMAND
        if no_command:
            result = IntentResult(None, text=result.text)
        report = self.reports.get(utterance_id)
        if report is not None:
            report.intent = result
        said_before = self._said_before(utterance_id, result)
        loud = report.loud if report is not None else loud
        noisy = loud or (report is not None and report.noisy)
        reverb = report.reverb_seconds if report is not None else None
        reverberant = trust.reverberant(reverb, loud, self.settings)
        voices = report is not None and report.voices
        doubtful = not said_before and (
            trust.doubtful(result, loud, self.settings, reverberant, voices)
            or trust.free_help(result, self.settings)
            or trust.doubted_no(result, noisy)
            or (not no_command and trust.ask_again_unheard(result, noisy or voices, self.settings))
        )
        # an answer to the help question is no intent Home Assistant knows (the dialogue
        # publishes the call for help it confirms)
        published = (
            IntentResult(None, text=result.text) if result.intent in ANSWER_INTENTS else result
        )
        events: list[Event] = [intent_event(published, utterance_id, now)]
        if not said_before:
            self._actions.append(AnswerDue(now, utterance_id, result, doubtful))
        return events

    def sure(self, utterance_id: str, confidence: float) -> bool:
        """Whether the answer owed for ``utterance_id`` (not yet taken) is to an intent
        believed without doubt and at least ``confidence`` sure.

        Ended early at a pause (the grammar's end reached, ``early_endpoint_margin`` to
        spare), such a command is complete: its answer need not wait for a follow-on.
        The first half of a paused request for help often fits a short command well
        ("I'm choking" ... as "what's the time", 0.986 in flite's voice): below
        ``stt.answer_at_once_confidence``, and after the full silence, the follow-on
        window stays open so the rest of the sentence is heard."""
        return any(
            isinstance(a, AnswerDue)
            and a.utterance_id == utterance_id
            and a.result.intent is not None
            and a.result.confidence >= confidence
            and not a.doubtful
            for a in self._actions
        )

    def forget_follow_ons(self) -> None:
        """The follow-ons that will not conclude (the utterance in progress was dropped)."""
        for dropped in [u for u in self.follow_ons if self.jobs is None or u not in self.jobs]:
            del self.follow_ons[dropped]

    def _said_before(self, utterance_id: str, result: IntentResult) -> bool:
        """Whether a follow-on is to be let pass without a word (see ``trust.let_pass``)."""
        before = self.follow_ons.pop(utterance_id, None)
        if before is None:
            return False
        report = self.reports.get(before)
        return trust.let_pass(result, report.intent if report is not None else None)


def note_searches(
    report: UtteranceReport, record: UtteranceRecord, streamed: SttResult, stt: SttResult
) -> None:
    """Put the searches aside made for the utterance's results (``streamed``, and ``stt``
    that decided) in its report, and whether other voices filled its room."""
    report.voices = record.voices
    own_mean = record.own_mean_of(streamed)
    if own_mean is not None:
        report.own_mean = own_mean.heard
        report.timings_ms["own_mean_search"] = own_mean.ms
    other_way = record.other_way_of(stt)
    if other_way is not None:
        report.second_hearing = other_way.search.heard
        report.timings_ms["second_hearing"] = other_way.search.ms
    if record.person_span is not None:
        words, words_other_way = record.person_span
        report.person_span = words.heard
        report.timings_ms["person_span_search"] = words.ms
        if words_other_way is not None:
            report.timings_ms["person_span_other_way"] = words_other_way.ms


def transcript_of(utterance: UtteranceEnded, stt: SttResult) -> Transcript:
    """What was heard of ``utterance`` (``stt``, as decided)."""
    return Transcript(
        timestamp_seconds=utterance.timestamp_seconds,
        utterance_id=utterance.utterance_id,
        text=stt.text,
        confidence=stt.confidence,
        in_grammar=stt.in_grammar,
    )
