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

from ..nlu import trust
from ..nlu.help_answers import answer_intent_set
from ..nlu.recognizer import IntentResult, TemplateRecognizer
from ..stt.base import HearsAnswers, SttResult, confidence
from ..stt.session import HearingSession
from ..stt.settings import SttSettings
from ..stt.steps import Steps, run_through
from .believed import Believed, Reading, SearchedAgain, UtteranceRecord
from .room_rules import RoomRules
from .short_check import ShortCheck

#: A doubted result's confidence, at most, as a share of ``doubt_below_confidence``.
DOUBTED_CONFIDENCE_SHARE = 0.9


class Belief(RoomRules):
    """Judges the results of ``hearing`` with ``templates`` and the trust rules (the
    room's: room_rules.py)."""

    def __init__(
        self, hearing: HearingSession, templates: TemplateRecognizer, settings: SttSettings
    ) -> None:
        self.hearing = hearing
        self.templates = templates
        self.settings = settings
        self.record = UtteranceRecord()
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
