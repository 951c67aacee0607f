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
app hands to its dialogue. A complete, trusted command (ended early at a pause, believed
without doubt) closes the follow-on window at once, so its answer need not wait for it;
one that ended on the full silence keeps it: it may be the first half of a paused request
for help.

The parts: stt/session.py hears the utterance and judges its room, belief.py decides
whether a result is believed (by the rules in nlu/trust.py) and nlu/fallback.py keeps the
fallback's jobs. ``Understanding`` drives them from the recorder's events and reports
each utterance.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..actions import Action, AnswerDue
from ..audio.chunk import AudioChunk
from ..config import Config
from ..events import Event, SpeechStarted, UtteranceEnded
from ..frontend.recorder import Phase, UtteranceRecorder
from ..nlu import trust
from ..nlu.events import Transcript, intent_event
from ..nlu.fallback import FallbackJobs
from ..nlu.llm import LlmFallback
from ..nlu.recognizer import IntentResult, TemplateRecognizer
from ..prosody.monitor import ProsodyMonitor
from ..stt.base import SpeechRecognizer, SttResult
from ..stt.hearing import MicHistory
from ..stt.lexicon import pocketsphinx_model_dir
from ..stt.session import HearingSession, words_in_speech
from ..stt.settings import SttSettings
from ..stt.sphinx import OpenTranscriber
from ..timing import ms_since
from .belief import Belief

EARLY_ENDPOINT_REASON = "early_endpoint"
#: Silence after the speech that a second hearing searches, s (the search reaches the
#: grammar's end within it; more only costs time).
SECOND_HEARING_TAIL_SECONDS = 0.3
#: Reports kept, of the latest utterances.
REPORTS_KEPT = 64


@dataclass(slots=True)
class UtteranceReport:
    """Everything known about one understood utterance (for the CLI and benchmarks)."""

    utterance_id: str
    start_seconds: float
    end_seconds: float
    reason: str
    stt: SttResult | None = None
    intent: IntentResult | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: In a loud room, a device action heard the other way (raw or denoised) too.
    second_hearing: SttResult | None = None
    #: The utterance searched again from its own mean (the streaming search was not
    #: trusted), whether or not that search was.
    own_mean: SttResult | None = None
    #: Whether its room was judged loud (when it was decided).
    loud: bool = False


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
        self.jobs = FallbackJobs(fallback, open_transcribe) if fallback is not None else None
        self._actions: list[Action] = []
        self.early_endpoint_seconds = self.settings.early_endpoint_ms / 1000.0
        #: Speech rate per utterance, fed the recognised words (set by the builder).
        self.prosody: ProsodyMonitor | None = None
        self.reports: dict[str, UtteranceReport] = {}
        #: Follow-on utterances not yet concluded, and the utterance each went on from.
        self._follow_ons: dict[str, str] = {}
        self._checked_silence = False
        self._listening = False

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
        return self.jobs.fallback if self.jobs is not None else None

    @property
    def loud(self) -> bool:
        """Whether the room of the utterance in progress (or the last one) is loud."""
        return self.hearing.loud

    @property
    def denoised(self) -> bool:
        """Whether the utterance in progress (or the last one) is heard denoised."""
        return self.hearing.denoised

    @property
    def open_follow_ons(self) -> frozenset[str]:
        """The follow-on utterances not yet concluded."""
        return frozenset(self._follow_ons)

    def observe(
        self,
        frame: AudioChunk,
        new_events: list[Event],
        recorder: UtteranceRecorder,
        mic: MicHistory | None = None,
    ) -> list[Event]:
        """Called for every frame the recorder saw, with the events it just produced."""
        out: list[Event] = []
        started = [e for e in new_events if isinstance(e, SpeechStarted)]
        if started:
            self.hearing.start(frame, recorder.frames, recorder.continuous, mic)
            self.belief.begin()
            self._listening = True
            self._checked_silence = False
            if recorder.following_on:  # it went on from the utterance reported last
                self._follow_ons[started[-1].utterance_id] = next(reversed(self.reports), "")
        elif self._listening and recorder.phase is Phase.IN_SPEECH:
            self.hearing.hear(frame, mic)
            out.extend(self._maybe_end_early(frame, recorder))
        for event in [*new_events, *out]:
            if isinstance(event, UtteranceEnded) and self._listening:
                self._listening = False
                out.extend(self.understand(event))
                if self._complete(event):
                    recorder.close_follow_on()
        return out

    def _complete(self, utterance: UtteranceEnded) -> bool:
        """Whether an utterance just decided was a complete, trusted command, whose answer
        need not wait for a follow-on: the grammar's end reached at a pause, with
        ``early_endpoint_margin`` to spare, believed without doubt and at least
        ``answer_at_once_confidence`` sure. The first half of a paused request for help
        often fits a short command well ("I'm choking" ... as "what's the time", 0.986 in
        flite's voice): below that, and when the utterance ended on the full silence, the
        follow-on window stays open so the rest of the sentence is heard."""
        if utterance.reason != EARLY_ENDPOINT_REASON:
            return False
        return any(
            isinstance(a, AnswerDue)
            and a.utterance_id == utterance.utterance_id
            and a.result.intent is not None
            and a.result.confidence >= self.settings.answer_at_once_confidence
            and not a.doubtful
            for a in self._actions
        )

    def _maybe_end_early(self, frame: AudioChunk, recorder: UtteranceRecorder) -> list[Event]:
        silence = recorder.quiet_since(frame.end_seconds)
        if silence <= 0:
            if self._checked_silence:  # speech again after a pause that did not end it
                self.recognizer.resume()
            self._checked_silence = False
            return []
        if (
            self.early_endpoint_seconds <= 0
            or self._checked_silence
            or silence < self.early_endpoint_seconds
        ):
            return []
        self._checked_silence = True
        self.hearing.judge_loudness(frame.end_seconds)
        heard = self.recognizer.pause()
        if heard is None:
            return []
        margin = self.settings.early_endpoint_margin
        believed = self.belief.believe(heard, frame.end_seconds, margin)
        if not believed.trusted or not words_in_speech(believed.stt, frame.end_seconds - silence):
            return []
        return recorder.end_now(frame.end_seconds, EARLY_ENDPOINT_REASON)

    def understand(self, utterance: UtteranceEnded) -> list[Event]:
        """Decide an utterance that has ended: what was heard (its transcript and speech
        rate) and, at once or later through ``poll``, its intent and the reply."""
        report = UtteranceReport(
            utterance.utterance_id, utterance.start_seconds, utterance.end_seconds, utterance.reason
        )
        self.reports[utterance.utterance_id] = report
        while len(self.reports) > REPORTS_KEPT:
            del self.reports[next(iter(self.reports))]
        started = time.perf_counter()
        self.hearing.judge_loudness(utterance.timestamp_seconds)
        report.loud = self.hearing.loud
        streamed = self.recognizer.finish()
        report.timings_ms["stt_finish"] = ms_since(started)
        started = time.perf_counter()
        self.belief.read(streamed)
        report.timings_ms["nlu"] = ms_since(started)
        heard_until = min(
            utterance.timestamp_seconds, utterance.end_seconds + SECOND_HEARING_TAIL_SECONDS
        )
        following_on = utterance.utterance_id in self._follow_ons
        margin = self.settings.follow_on_margin if following_on else 0.0
        believed = self.belief.believe(streamed, heard_until, margin)
        self._note_searches(report, streamed, believed.stt)
        stt = dataclasses.replace(
            believed.stt, in_grammar=believed.trusted, confidence=self.belief.confidence(believed)
        )
        report.stt = stt
        now = utterance.timestamp_seconds
        events: list[Event] = [
            Transcript(
                timestamp_seconds=now,
                utterance_id=utterance.utterance_id,
                text=stt.text,
                confidence=stt.confidence,
                in_grammar=stt.in_grammar,
            )
        ]
        if self.prosody is not None and utterance.audio is not None:
            # Words from a grammar forced onto out-of-domain speech are not trusted.
            words = stt.words if stt.in_grammar else None
            events.extend(self.prosody.process(utterance, words=words))
        result = believed.result
        if believed.trusted and result.intent is not None:
            result = IntentResult(
                result.intent, result.slots, stt.confidence, result.source, result.text
            )
            return events + self._conclude(utterance.utterance_id, result, now)
        if self.jobs is not None and utterance.audio is not None:
            self.jobs.submit(utterance.utterance_id, utterance.audio, stt.text, report.timings_ms)
            return events
        return events + self._conclude(
            utterance.utterance_id, IntentResult(None, text=stt.text), now
        )

    def _note_searches(self, report: UtteranceReport, streamed: SttResult, stt: SttResult) -> None:
        """Put the searches aside made for the utterance's results in its report."""
        own_mean = self.belief.record.own_mean_of(streamed)
        if own_mean is not None:
            report.own_mean = own_mean.heard
            report.timings_ms["own_mean_search"] = own_mean.ms
        other_way = self.belief.record.other_way_of(stt)
        if other_way is not None:
            report.second_hearing = other_way.search.heard
            report.timings_ms["second_hearing"] = other_way.search.ms

    def poll(self, now_seconds: float, wait_seconds: float = 0.0) -> list[Event]:
        """Collect fallback results that are ready (waiting up to ``wait_seconds``)."""
        events: list[Event] = []
        if self.jobs is not None:
            for utterance_id, result in self.jobs.collect(wait_seconds):
                events.extend(self._conclude(utterance_id, result, now_seconds))
        return events

    def take_actions(self) -> list[Action]:
        """The answers owed since the last call (``AnswerDue``), in order."""
        actions, self._actions = self._actions, []
        return actions

    def _conclude(self, utterance_id: str, result: IntentResult, now: float) -> list[Event]:
        """The intent event and the answer owed (``doubtful``: the dialogue asks once
        more; the app publishes its intent event as not understood, see app.py)."""
        report = self.reports.get(utterance_id)
        if report is not None:
            report.intent = result
        said_before = self._said_before(utterance_id, result)
        loud = report.loud if report is not None else self.hearing.loud
        doubtful = not said_before and trust.doubtful(result, loud, self.settings)
        events: list[Event] = [intent_event(result, utterance_id, now)]
        if not said_before:
            self._actions.append(AnswerDue(now, utterance_id, result, doubtful))
        return events

    def _said_before(self, utterance_id: str, result: IntentResult) -> bool:
        """Whether a follow-on is to be let pass without a word (see ``trust.let_pass``)."""
        before = self._follow_ons.pop(utterance_id, None)
        if before is None:
            return False
        report = self.reports.get(before)
        return trust.let_pass(result, report.intent if report is not None else None)

    def replace_recognizer(
        self, recognizer: SpeechRecognizer, templates: TemplateRecognizer
    ) -> bool:
        """Use a recognizer and templates built for new slot lists (names and areas).

        Only between utterances: returns False while one is being heard (try again).
        """
        if self._listening:
            return False
        self.recognizer.reset()
        self.hearing.recognizer = recognizer
        self.belief.templates = templates
        return True

    def reset(self) -> None:
        """Drop the utterance in progress."""
        self.recognizer.reset()
        self._listening = False
        self._checked_silence = False
        for dropped in [u for u in self._follow_ons if self.jobs is None or u not in self.jobs]:
            del self._follow_ons[dropped]  # will not conclude


def build_understanding(config: Config, use_llm: bool = True) -> Understanding:
    """Recognizer, templates and fallback from the configuration."""
    from ..stt.factory import configured_intent_set, make_recognizer  # noqa: PLC0415

    language = config.satellite.language
    intent_set = configured_intent_set(config.nlu, language, config.satellite.area)
    recognizer = make_recognizer(config.stt, language, intent_set)
    fallback = None
    if use_llm and config.llm.enabled:
        fallback = LlmFallback(config.llm, config.satellite.language, config.nlu.intents)
    open_transcribe = None
    if config.stt.open_transcripts and config.stt.engine == "pocketsphinx":
        open_transcribe = _LazyOpenTranscriber(config.satellite.language)
    understanding = Understanding(
        recognizer,
        TemplateRecognizer(intent_set),
        fallback,
        open_transcribe,
        config.stt,
    )
    if config.prosody.enabled:
        understanding.prosody = ProsodyMonitor(config.prosody)
    return understanding


class _LazyOpenTranscriber:
    """Loads the full language model on first use (in the fallback worker)."""

    def __init__(self, language: str) -> None:
        self.language = language
        self._transcriber: OpenTranscriber | None = None

    def __call__(self, audio: AudioChunk) -> str:
        if self._transcriber is None:
            self._transcriber = OpenTranscriber(pocketsphinx_model_dir(self.language))
        return self._transcriber.transcribe(audio)
