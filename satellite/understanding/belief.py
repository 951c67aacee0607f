"""Whether what the streaming search heard is believed, worked out once per result.

A grammar result is read by the templates and held to the trust rules (nlu/trust.py).
One the streaming search does not trust gives way to the utterance searched again from
its own mean, if that one is trusted with ``own_mean_shift`` more score; in a loud room a
device action must come out the same heard the other way too, and in a reverberant one
every result but a call for help needs ``reverb_shift`` more score (a call for help
there is asked about: it is never refused for the room). A result judged at the
pause that ended the utterance early comes again at its end: what was worked out for it
is kept in the utterance's record, not worked out again. An answer to the help question
is read by the answers' templates (``begin``).

A word or two heard as any intent in a quiet dry room, outside the help question, is
checked (short_check.py): searched again over its words' span beside the things said
that are no command ("yes", "thanks", "hello"), and heard there clearly as one of them it
is ``NOT_A_COMMAND``: settled at once as not understood (answers.py), not handed to the
fallback, whose LLM made "I'm fine", "sorry" and "all right" calls for help. A call for
help whose check hears neither a call nor, clearly, a not-command is asked about ("Do you
need help?") before it goes out: "no" heard as "would you help", searched again as
"I'm okay" but not clearly, had gone out at once.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass

from ..frontend.person_span import other_voices, person_span
from ..nlu import trust
from ..nlu.help_answers import HELP, answer_intent_set
from ..nlu.recognizer import IntentResult, TemplateRecognizer
from ..stt.base import HearsAnswers, SttResult, confidence
from ..stt.searches_again import SearchAside
from ..stt.session import HearingSession
from ..stt.settings import SttSettings
from ..stt.steps import Steps, run_through
from ..timing import ms_since
from .short_check import ShortCheck

_LOGGER = logging.getLogger(__name__)
#: The room before an utterance its person's words are judged against, s (the
#: expander's history).
PERSON_ROOM_SECONDS = 3.0
#: A call for help of this many words or fewer heard in a noisy room is asked about
#: first, however it was heard the other way.
NOISY_CALL_CONFIRMED_WORDS = 2
#: A doubted result's confidence, at most, as a share of ``doubt_below_confidence``.
DOUBTED_CONFIDENCE_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class Believed:
    """What a streaming result comes to."""

    #: The result that decides: the streaming one, or the utterance searched again.
    stt: SttResult
    #: What the templates make of it.
    result: IntentResult
    trusted: bool
    #: The extra score it was asked for (to weigh its confidence by).
    shift: float
    #: Asked about before it is acted on, however well scored (a call for help that
    #: short speech's check did not hear as a call again: short_check.py).
    doubted: bool = False


@dataclass(frozen=True, slots=True)
class Reading:
    """A grammar result and what the templates made of it."""

    stt: SttResult
    result: IntentResult


@dataclass(frozen=True, slots=True)
class SearchedAgain:
    """A result searched again aside (from its own mean, or heard the other way): the
    search, and for the other way whether it gave the same request."""

    of: SttResult
    search: SearchAside
    agreed: bool = True


@dataclass(slots=True)
class UtteranceRecord:
    """What was worked out for the utterance in progress, each for the latest result."""

    reading: Reading | None = None
    own_mean: SearchedAgain | None = None
    other_way: SearchedAgain | None = None
    #: A streaming result from short speech searched again beside the not-commands
    #: (short_check.py), the not-command it came to (None: none, or not trusted) and
    #: whether, a call for help, it is doubted.
    short_check: tuple[SttResult, Believed | None, bool] | None = None
    #: The person's own words searched again alone (``Belief.person_span_steps``), and
    #: heard the other way.
    person_span: tuple[SearchAside, SearchAside | None] | None = None
    #: Whether other voices filled the room (judged once the utterance ended).
    voices: bool = False
    #: Whether they did up to a time (``Belief.among_voices``: judged once per time).
    voices_until: tuple[float, bool] | None = None

    def own_mean_of(self, stt: SttResult) -> SearchAside | None:
        """The search from its own mean made for the streaming result ``stt``, if any."""
        if self.own_mean is None or self.own_mean.of is not stt:
            return None
        return self.own_mean.search

    def other_way_of(self, stt: SttResult) -> SearchedAgain | None:
        """The hearing the other way made for the result ``stt``, if any."""
        if self.other_way is None or self.other_way.of is not stt:
            return None
        return self.other_way


class Belief:
    """Judges the results of ``hearing`` with ``templates`` and the trust rules."""

    def __init__(
        self, hearing: HearingSession, templates: TemplateRecognizer, settings: SttSettings
    ) -> None:
        self.hearing = hearing
        self.templates = templates
        self.settings = settings
        self.record = UtteranceRecord()
        #: The utterance in progress is heard with the answers' grammar.
        self.answering = False
        self._answer_templates: TemplateRecognizer | None = None
        self.short_check = ShortCheck(hearing, templates.intent_set.language, settings)

    @property
    def answer_templates(self) -> TemplateRecognizer:
        """The templates that read answers to the help question (made on first use)."""
        if self._answer_templates is None:
            language = self.templates.intent_set.language
            self._answer_templates = TemplateRecognizer(answer_intent_set(language))
        return self._answer_templates

    @property
    def reader(self) -> TemplateRecognizer:
        """The templates that read the utterance in progress."""
        return self.answer_templates if self.answering else self.templates

    def begin(self, answer: bool = False) -> None:
        """A new utterance: nothing is worked out for it yet; ``answer``: it began while
        the help question was open, and is heard with the answers' grammar if the
        recognizer has one."""
        self.record = UtteranceRecord()
        recognizer = self.hearing.recognizer
        self.answering = isinstance(recognizer, HearsAnswers) and (
            recognizer.answer_searches.hear(answer)
        )
        if self.answering:
            _ = self.answer_templates  # parsed now, not in the frame that decides

    def read(self, stt: SttResult) -> IntentResult:
        """What the templates make of a grammar result (once per result)."""
        if not stt.in_grammar:
            return IntentResult(None)
        known = self.record.reading
        if known is not None and known.stt is stt:
            return known.result
        result = self.reader.recognize(stt.text)
        self.record.reading = Reading(stt, result)
        return result

    def believe(self, stt: SttResult, heard_until: float, margin: float = 0.0) -> Believed:
        """``believe_steps`` all at once."""
        return run_through(self.believe_steps(stt, heard_until, margin))

    def believe_steps(
        self, stt: SttResult, heard_until: float, margin: float = 0.0, ended: bool = False
    ) -> Steps[Believed]:
        """What a streaming result heard up to ``heard_until`` comes to, asked ``margin``
        more score than usual. Not trusted, it gives way to the utterance searched again
        from its own mean, if that is trusted, or (``ended``: the streaming search has
        finished) to the person's own words searched alone (``person_span_steps``);
        short speech is checked (see above). The searches are done a step at a time.
        ``ended``: whether other voices filled the room is judged too (``record``)."""
        believed = yield from self._believe_steps(stt, heard_until, margin)
        believed = yield from self._help_agrees(believed, heard_until)
        if ended:
            self.record.voices = self.among_voices(heard_until)
        if ended and not believed.trusted:
            spanned = yield from self.person_span_steps(believed, heard_until, margin)
            if spanned.trusted:  # (asked about: not checked as short speech)
                return spanned
        if believed.result.intent is None or self.answering:
            return believed
        return (yield from self._check_short(stt, believed, heard_until))

    def _believe_steps(
        self, stt: SttResult, heard_until: float, margin: float = 0.0
    ) -> Steps[Believed]:
        result = self.read(stt)
        if (yield from self._trusted(stt, result, heard_until, margin)):
            return Believed(stt, result, True, margin)
        if margin and (yield from self._trusted(stt, result, heard_until)):
            return Believed(stt, result, False, 0.0)  # believed, but not by the margin
        again = yield from self._search_own_mean(stt, heard_until)
        if again is None or not again.in_grammar:
            return Believed(stt, result, False, 0.0)
        reading = self.reader.recognize(again.text)
        shift = self.settings.own_mean_shift + margin
        if not (yield from self._trusted(again, reading, heard_until, shift)):
            return Believed(stt, result, False, 0.0)
        return Believed(again, reading, True, shift)

    def confidence(self, believed: Believed) -> float:
        """0-1 from how far its score lies above what it needs (engines without a
        score: their own confidence)."""
        margin = trust.score_margin(
            believed.stt, believed.result, self.hearing.loud, self.settings, believed.shift
        )
        value = believed.stt.confidence if margin is None else confidence(margin)
        if believed.doubted and self.settings.doubt_below_confidence > 0:  # asked about
            return min(value, self.settings.doubt_below_confidence * DOUBTED_CONFIDENCE_SHARE)
        return value

    def among_voices(self, heard_until: float) -> bool:
        """Whether other voices filled the room around the utterance heard up to
        ``heard_until`` (frontend/person_span.other_voices; False when the history no
        longer holds it)."""
        known = self.record.voices_until
        if known is None or known[0] != heard_until:
            frames = self.hearing.utterance_and_room(heard_until, PERSON_ROOM_SECONDS)
            voices = frames is not None and other_voices(frames[1], frames[0])
            known = self.record.voices_until = (heard_until, voices)
        return known[1]

    def _noisy(self, heard_until: float) -> bool:
        """Whether the room is noisy (``HearingSession.noisy``) and what is heard in it
        must agree with the other hearing: not where other voices fill it and the voices'
        rule asks about all that is heard there anyway (``ask_again_among_voices``). Both
        rules there refused right commands the voices' rule alone had asked about."""
        if not self.hearing.noisy or not self.settings.ask_again_among_voices:
            return self.hearing.noisy
        return not self.among_voices(heard_until)

    def person_span_steps(
        self, believed: Believed, heard_until: float, margin: float = 0.0
    ) -> Steps[Believed]:
        """An utterance not believed (``believed``, at its end) in a room of other
        voices: the person's own words in it searched again alone
        (``stt.person_span_retry``, see frontend/person_span.py), believed by the rules the
        whole is (``stt.person_span_shift`` more score, and heard the same the other way
        over the same words where it must be) and then always asked about once more (the
        others' voices are still under the words); else ``believed`` as it was. Only once
        the streaming search has finished: the search again is the streaming one's."""
        if believed.trusted or not self.settings.person_span_retry:
            return believed
        frames = self.hearing.utterance_and_room(heard_until, PERSON_ROOM_SECONDS)
        span = None if frames is None else person_span(frames[1], frames[0])
        if span is None:
            return believed
        search = yield from self.hearing.search_span_steps(span.start, span.end)
        if search is None or not search.heard.in_grammar:
            return believed
        heard = search.heard
        reading = self.reader.recognize(heard.text)
        shift = self.settings.person_span_shift + margin
        self.record.person_span = (search, None)
        if not self._scored(heard, reading, shift):
            return believed
        if trust.must_agree(reading, self.hearing.loud, self.settings, self._noisy(heard_until)):
            other_way = yield from self.hearing.search_other_way_steps(span.end, span.start)
            self.record.person_span = (search, other_way)
            other = None if other_way is None else other_way.heard.text
            said = self.reader.recognize(other) if other else IntentResult(None)
            if other is not None and not trust.same_request(said, reading):
                _LOGGER.info("The words %r heard the other way as %r", heard.text, other)
                return believed
        return Believed(heard, reading, True, shift, doubted=True)

    def _scored(self, stt: SttResult, result: IntentResult, shift: float = 0.0) -> bool:
        """Scored well enough in the domain for the room (a reverberant one asks more)."""
        loud = self.hearing.loud
        reverberant = trust.reverberant(self.hearing.reverb_seconds, loud, self.settings)
        if reverberant and result.intent != HELP:  # help is asked about, never refused
            shift += self.settings.reverb_shift
        return trust.scored_enough(stt, result, loud, self.settings, shift)

    def _trusted(
        self, stt: SttResult, result: IntentResult, heard_until: float, shift: float = 0.0
    ) -> Steps[bool]:
        """Scored well enough in the domain and, where it must, heard the same the other
        way."""
        if not self._scored(stt, result, shift):
            return False
        if not trust.must_agree(result, self.hearing.loud, self.settings, self._noisy(heard_until)):
            return True
        return (yield from self._hearings_agree(stt, result, heard_until))

    def _help_agrees(self, believed: Believed, heard_until: float) -> Steps[Believed]:
        """A call for help believed in a noisy room (``HearingSession.noisy``), outside the
        help question: asked about first unless it comes out the same heard the other way
        (a care intent is never refused for the room), and one of a word or two always
        (the least to go on: flite's "okay" was heard as "help me" both ways)."""
        if not (believed.trusted and believed.result.intent == HELP and self.hearing.noisy):
            return believed
        if self.answering:
            return believed
        if len(believed.stt.text.split()) <= NOISY_CALL_CONFIRMED_WORDS:
            return dataclasses.replace(believed, doubted=True)
        if (yield from self._hearings_agree(believed.stt, believed.result, heard_until)):
            return believed
        return dataclasses.replace(believed, doubted=True)

    def _check_short(
        self, stt: SttResult, believed: Believed, heard_until: float
    ) -> Steps[Believed]:
        """An intent (``believed``, from the streaming result ``stt``) searched again
        beside the not-commands: ``NOT_A_COMMAND`` when it is heard there as one, else
        ``believed`` as it was, doubted if a call for help the check did not hear as a
        call again (searched once per streaming result)."""
        known = self.record.short_check
        if known is None or known[0] is not stt:
            assert believed.result.intent is not None
            intent = believed.result.intent
            found = yield from self.short_check.check_steps(stt, intent, heard_until)
            not_a_command = None
            if found is not None and found.not_a_command is not None:
                not_a_command = Believed(*found.not_a_command, True, self.settings.own_mean_shift)
            known = (stt, not_a_command, found is not None and found.doubts_call)
            self.record.short_check = known
        _, not_a_command, doubted = known
        if not_a_command is not None:
            return not_a_command
        return dataclasses.replace(believed, doubted=True) if doubted else believed

    def _search_own_mean(self, stt: SttResult, heard_until: float) -> Steps[SttResult | None]:
        """The utterance searched again from its own mean, once per streaming result
        (None when it cannot be: see ``HearingSession.search_own_mean``)."""
        known = self.record.own_mean_of(stt)
        if known is not None:
            return known.heard
        search = yield from self.hearing.search_own_mean_steps(heard_until)
        if search is None:
            return None
        self.record.own_mean = SearchedAgain(stt, search)
        return search.heard

    def _hearings_agree(
        self, stt: SttResult, result: IntentResult, heard_until: float
    ) -> Steps[bool]:
        """Whether the utterance heard the other way gives the same request. When the
        recognizer cannot search again or the history no longer holds the utterance, the
        first hearing decides."""
        known = self.record.other_way_of(stt)
        if known is not None:
            return known.agreed
        search = yield from self.hearing.search_other_way_steps(heard_until)
        if search is None:
            return True
        started = time.perf_counter()
        other = search.heard
        reading = self.reader.recognize(other.text) if other.text else IntentResult(None)
        agreed = trust.same_request(reading, result)
        timed = SearchAside(other, round(search.ms + ms_since(started), 2))
        self.record.other_way = SearchedAgain(stt, timed, agreed)
        if not agreed:
            _LOGGER.info("%r heard the other way as %r: not acted on at once", stt.text, other.text)
        return agreed
