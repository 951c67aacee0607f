"""The short check: a word or two heard as a command is searched again beside the things
said that are no command.

The commands' grammar has no "yes", "thanks" or "hello", and its search forces such
words into the nearest command: "no" into a call for help, "thanks" or "hello" into
"set the light to red". So any intent heard from short speech (its words span at most
``SHORT_CHECK_MAX_SPEECH_SECONDS``) in a quiet dry room, outside the help question, is
searched again from the utterance's own mean: a call for help, the whole utterance,
with the help check's grammar (CallForHelp's sentences beside the not-commands);
anything else, only its words' span, with the sentence heard beside the not-commands,
greetings and fillers ("oh", "hmm": stt/answer_grammar.py). Heard there as no command,
trusted with ``own_mean_shift`` more score than a care intent needs and
``HELP_CHECK_MARGIN`` (a call) or ``SHORT_CHECK_MARGIN`` per frame better than the
intent itself was heard, it is ``NOT_A_COMMAND``: not understood, nothing done, nothing
handed to the LLM fallback. A call the check hears again goes out at once only when
that hearing is trusted as well (the same shift); else it is asked about. In
a loud or reverberant room (where doubtful results are asked about anyway), or when the
search cannot be made, the intent stands: a doubt never drops a request.

A call the help check heard as a call again is searched once more, whole and from the
same mean, with CallForHelp's sentences beside everything short that is no command,
"nope", "oh" and "hello" too (``confirm_steps``, stt/answer_grammar.py): heard there as
no call, it is asked about ("Do you need help?") instead of sent at once; never dropped.
The help check cannot hold those words (a real "help" heard as "nope" would be dropped),
and from no mean did it tell Festival's "no", "nope" and "hello" from "help".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..nlu import trust
from ..nlu.help_answers import HELP, help_check_intent_set, help_confirm_intent_set
from ..nlu.intents import NOT_A_COMMAND
from ..nlu.recognizer import IntentResult, TemplateRecognizer
from ..stt.answer_grammar import (
    CHECK_SEARCH,
    CONFIRM_SEARCH,
    SHORT_CHECK_SEARCH,
    AnswerSearches,
    short_check_intent_set,
)
from ..stt.base import HearsAnswers, SttResult
from ..stt.searches_again import SearchAside
from ..stt.session import HearingSession
from ..stt.settings import SttSettings
from ..stt.steps import Steps, bunched

_LOGGER = logging.getLogger(__name__)
#: How much better per frame a not-command heard by the help check must score than the
#: call for help the commands' search heard (log-likelihood against the phone loop).
#: Measured on calls searched from the utterance's start: "no" / "nope" / eSpeak's
#: "what" heard as help scored 10.8 / 4.3 / 6.3 better as not-commands; eSpeak's "please
#: call the nurse" in a reverberant room (its reverberation not judged) came out "i'm
#: alright", 0.4 better.
HELP_CHECK_MARGIN = 3.0
#: The same for any other intent, which may score this much worse. Its check is a contest
#: of the sentence heard and the not-commands from the same mean over the same span, so
#: a not-command that comes out has beaten the sentence there; the streaming score it
#: is held to was taken from another mean over more silence. Measured (spans padded by
#: 0.1 s, their own mean): of 18 short real commands in eSpeak voices none came out a
#: not-command at any margin from -5 to 5; of 15 non-commands 12 were caught at -5 to
#: -2, 9 at 3; eSpeak's "thanks" heard as "study six" (set the study's light to 6 %,
#: sure) scored 2.4 worse as "thanks" (0.3 s padding, the utterance's mean).
SHORT_CHECK_MARGIN = -3.0
#: Only an intent whose words span at most this long is checked, s: the not-commands
#: are a word or two, but the words the commands' search forces onto one can span more
#: than the speech (flite's slow "i'm fine" was heard as "timer for nine minute" over
#: 1.07 s and started a timer at once when this was 1.0). Measured at 1.25
#: (bench/false_help.py --all-voices, clean, after the wake word): short real commands
#: came out the same, decided 20-40 ms later at the median (one check more in three);
#: checked only when poorly scored, they were decided later still (their guess, made on
#: a better-scored partial result, was not made).
SHORT_CHECK_MAX_SPEECH_SECONDS = 1.25
#: ... and a call for help's (its check and confirmation search it whole, and were
#: measured at 1 s: at 1.25 the calls came out the same, decided 40-60 ms later). Tried
#: again at 1.25: Festival's "stop" with people talking 20 dB below, heard as "fetch
#: doctor" over 1.01 s and sent at once, was asked about, and bench/false_help.py's 170
#: calls came out the same; but the demo's eSpeak "please call the nurse" was heard again
#: as "we need a nurse", poorly, and asked about instead of sent (tests/test_demo.py).
SHORT_CHECK_CALL_MAX_SPEECH_SECONDS = 1.0
#: The span searched: from this long before the first word to this long after the last,
#: s (not the utterance from its start: the wake word's tail was heard as words, and
#: the search cost its length).
SHORT_CHECK_PAD_SECONDS = 0.3
#: Frames the check searches per step of the frame loop's budget.
SHORT_CHECK_FRAMES_PER_STEP = 3
#: ... and the help confirmation, which searches the grammar alone (no phone loop): about
#: the same CPU per step (0.97 against 1.48 ms a frame, Festival's checked takes, x86).
CONFIRM_FRAMES_PER_STEP = 4


@dataclass(frozen=True, slots=True)
class Searched:
    """What a check's search heard, and for a call it heard again, its confirmation."""

    heard: SttResult
    #: What the help confirmation's search heard (None: not made).
    confirmed: SttResult | None = None


@dataclass(frozen=True, slots=True)
class EarlySearch:
    """The check's search made early, on what the streaming search had heard so far."""

    #: The partial result it was made for.
    of: SttResult
    #: Whether it was a call for help's check (searched whole).
    call: bool
    searched: Searched


@dataclass(frozen=True, slots=True)
class Checked:
    """What a check's search came to."""

    #: What the search heard.
    heard: SttResult
    #: The not-command it is (its hearing and reading), if it is one and trusted.
    not_a_command: tuple[SttResult, IntentResult] | None
    #: A call for help the search did not hear as a call again (nor as a trusted
    #: not-command), or its confirmation did not: it is asked about before it goes out.
    doubts_call: bool
    #: What the help confirmation's search heard (None: not made).
    confirmed: SttResult | None = None


def same_words(one: SttResult, other: SttResult) -> bool:
    """Whether two results heard the same words from the same frame (the check's span
    starts there; its end is the audio searched, the last word's end moves as silence
    comes in)."""
    if one.text != other.text or not one.words or not other.words:
        return False
    return one.words[0].start_seconds == other.words[0].start_seconds


class ShortCheck:
    """Searches short speech again beside the not-commands (see above)."""

    def __init__(self, hearing: HearingSession, language: str, settings: SttSettings) -> None:
        self.hearing = hearing
        self.language = language
        self.settings = settings
        #: Searches made so far (each ~0.2 s of CPU on one x86 core).
        self.searches = 0
        #: The search made early for a partial result (early_check.py), until used.
        self.early: EarlySearch | None = None
        self._templates: dict[str, TemplateRecognizer] = {}

    def applies(self, stt: SttResult, call: bool) -> AnswerSearches | None:
        """The recognizer's searches if ``stt`` (a streaming result; a ``call`` for help)
        is to be checked: short speech in a quiet dry room, by a recognizer that holds
        the checks."""
        recognizer = self.hearing.recognizer
        loud = self.hearing.loud
        words = stt.words
        longest = SHORT_CHECK_CALL_MAX_SPEECH_SECONDS if call else SHORT_CHECK_MAX_SPEECH_SECONDS
        if (
            loud
            or not words
            or words[-1].end_seconds - words[0].start_seconds > longest
            or not isinstance(recognizer, HearsAnswers)
            or trust.reverberant(self.hearing.reverb_seconds, loud, self.settings)
        ):
            return None
        return recognizer.answer_searches

    def check_steps(self, stt: SttResult, intent: str, heard_until: float) -> Steps[Checked | None]:
        """What the streaming result ``stt``, read as ``intent``, heard up to
        ``heard_until`` comes to searched again (None: the check is not made). A step at
        a time. The search made early for the same words (``early``, see early_check.py)
        is used if there is one."""
        call = intent == HELP
        early, self.early = self.early, None
        usable = early is not None and early.call == call and same_words(early.of, stt)
        if early is not None and usable and self.applies(stt, call) is not None:
            searched: Searched | None = early.searched
        else:
            searched = yield from self.search_steps(stt, intent, heard_until)
        if searched is None:
            return None
        heard, confirmed = searched.heard, searched.confirmed
        not_a_command = self._not_a_command(stt, heard, call)
        doubts = call and not_a_command is None and not self._heard_as_call(heard)
        if call and confirmed is not None and not self._heard_as_call(confirmed, CONFIRM_SEARCH):
            doubts = True
        if doubts:
            again = heard.text if confirmed is None else f"{heard.text}, then {confirmed.text}"
            _LOGGER.info("Heard %r, searched again %r: asked about", stt.text, again)
        return Checked(heard, not_a_command, doubts, confirmed)

    def confirm_steps(self, stt: SttResult, heard_until: float) -> Steps[SttResult | None]:
        """The help confirmation's search for a call ``stt`` its check heard again: the
        utterance up to ``heard_until``, whole, from its own mean (as the check), with
        CallForHelp's sentences beside all that is no command, for its words only (the
        streaming search may go on meanwhile): what it heard, or None when it is not made
        (nothing to search it with: the check's word stands)."""
        searches = self.applies(stt, call=True)
        if searches is None or not searches.can_confirm:
            return None
        searches.checking = CONFIRM_SEARCH
        steps = self.hearing.search_own_mean_steps(heard_until, words_only=True)
        return (yield from self._searched(searches, stt, steps, CONFIRM_FRAMES_PER_STEP))

    def search_steps(
        self, stt: SttResult, intent: str, heard_until: float, beside: bool = False
    ) -> Steps[Searched | None]:
        """The check's search for ``stt`` read as ``intent``, over the audio up to
        ``heard_until`` (``beside``: the streaming search going on meanwhile), and for a
        call it hears again, the confirmation's: what they heard, or None when the
        check is not made."""
        searches = self.applies(stt, intent == HELP)
        if searches is None:
            return None
        since: float | None = stt.words[0].start_seconds - SHORT_CHECK_PAD_SECONDS
        until = min(heard_until, stt.words[-1].end_seconds + SHORT_CHECK_PAD_SECONDS)
        if intent == HELP:
            # a call is searched whole, as its margin was measured: over the span, eSpeak's
            # "hello" and "nope" heard as help were no longer caught (asked about instead)
            since, until = None, heard_until
            if not searches.can_check:
                return None
            searches.checking = CHECK_SEARCH
        elif not searches.check_short([w.word for w in stt.words]):
            return None
        steps = self.hearing.search_own_mean_steps(until, since, beside)
        heard = yield from self._searched(searches, stt, steps, SHORT_CHECK_FRAMES_PER_STEP)
        if heard is None:
            return None
        confirmed = None
        if intent == HELP and self._heard_as_call(heard):
            confirmed = yield from self.confirm_steps(stt, heard_until)
        return Searched(heard, confirmed)

    def _searched(
        self,
        searches: AnswerSearches,
        stt: SttResult,
        steps: Steps[SearchAside | None],
        frames_per_step: int,
    ) -> Steps[SttResult | None]:
        """The search ``steps`` (of the session: see ``HearingSession``) with the grammar
        ``searches`` is ``checking``, ``frames_per_step`` frames a step: what it heard,
        or None when it cannot be made."""
        checking = searches.checking
        try:
            search = yield from searches.held(bunched(steps, frames_per_step))
        finally:
            searches.checking = None
        if search is None:
            return None
        self.searches += 1
        heard = search.heard
        _LOGGER.debug(
            "%s: %r (%s) heard again as %r (%s, %s) in %.1f ms",
            checking,
            stt.text,
            stt.score_per_frame,
            heard.text,
            heard.score_per_frame,
            "in the grammar" if heard.in_grammar else "not in the grammar",
            search.ms,
        )
        return heard

    def _heard_as_call(self, heard: SttResult, search: str = CHECK_SEARCH) -> bool:
        """Whether the help check's search (or ``search``'s: the confirmation's) ``heard``
        a whole call for help, scored as the check's not-commands must be (the
        search-again's shift; a search with no score: as it says): eSpeak's "never mind",
        heard as "get me my nurse", was heard so again 1.7 worse per frame, below that."""
        if not heard.in_grammar:
            return False
        reading = self._reading(heard, search)
        shift = self.settings.own_mean_shift
        return reading.intent == HELP and trust.scored_enough(
            heard, reading, self.hearing.loud, self.settings, shift
        )

    def _reading(self, heard: SttResult, search: str) -> IntentResult:
        """``heard`` read with the templates of ``search``'s grammar: the help check's, its
        confirmation's or the short check's."""
        if search not in self._templates:
            made = {
                CHECK_SEARCH: help_check_intent_set,
                CONFIRM_SEARCH: help_confirm_intent_set,
                SHORT_CHECK_SEARCH: short_check_intent_set,
            }[search]
            self._templates[search] = TemplateRecognizer(made(self.language))
        return self._templates[search].recognize(heard.text)

    def _not_a_command(
        self, said: SttResult, heard: SttResult, call: bool
    ) -> tuple[SttResult, IntentResult] | None:
        """``heard`` (the check's search) read as ``NOT_A_COMMAND``, if it is one, scored
        as a care intent would have to be with the search-again's shift and a margin per
        frame better than ``said`` (a ``call`` for help: ``HELP_CHECK_MARGIN``, else
        ``SHORT_CHECK_MARGIN``); else None."""
        if not heard.in_grammar:
            return None
        margin = HELP_CHECK_MARGIN if call else SHORT_CHECK_MARGIN
        reading = self._reading(heard, CHECK_SEARCH if call else SHORT_CHECK_SEARCH)
        shift = self.settings.own_mean_shift
        loud = self.hearing.loud
        if (
            reading.intent != NOT_A_COMMAND
            or not trust.scored_enough(heard, reading, loud, self.settings, shift)
            or not _clearly_better(heard, said, margin)
        ):
            return None
        _LOGGER.info("Heard %r, searched again %r: no command", said.text, heard.text)
        return heard, reading


def _clearly_better(heard: SttResult, said: SttResult, margin: float) -> bool:
    """Whether ``heard`` scored ``margin`` per frame better than ``said`` (without both
    scores: no)."""
    if heard.score_per_frame is None or said.score_per_frame is None:
        return False
    return heard.score_per_frame >= said.score_per_frame + margin
