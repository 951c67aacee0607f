"""The rules of the room for ``Belief`` (understanding/belief.py): a result must be
scored well enough for the room (a reverberant one asks more), and in a loud or noisy
room come out the same heard the other way (``trust.must_agree``), except where other
voices fill a noisy room and the voices' rule asks about all that is heard there; a call
for help believed in a noisy room is asked about first unless it agrees; an utterance not
believed among other voices is searched again over the person's own words alone
(frontend/person_span.py)."""

from __future__ import annotations

import dataclasses
import logging
import time

from ..frontend.person_span import other_voices, person_span
from ..nlu import trust
from ..nlu.help_answers import HELP
from ..nlu.recognizer import IntentResult, TemplateRecognizer
from ..stt.base import SttResult
from ..stt.searches_again import SearchAside
from ..stt.session import HearingSession
from ..stt.settings import SttSettings
from ..stt.steps import Steps
from ..timing import ms_since
from .believed import Believed, SearchedAgain, UtteranceRecord

_LOGGER = logging.getLogger(__name__)
#: The room before an utterance its person's words are judged against, s (the
#: expander's history).
PERSON_ROOM_SECONDS = 3.0
#: A call for help of this many words or fewer heard in a noisy room is asked about
#: first, however it was heard the other way.
NOISY_CALL_CONFIRMED_WORDS = 2


class RoomRules:
    """What the room asks of a result (the base of ``Belief``, which keeps the state)."""

    hearing: HearingSession
    settings: SttSettings
    #: What was worked out for the utterance in progress.
    record: UtteranceRecord
    #: The utterance in progress is heard with the answers' grammar.
    answering: bool

    @property
    def reader(self) -> TemplateRecognizer:
        """The templates that read the utterance in progress (``Belief``'s)."""
        raise NotImplementedError

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
