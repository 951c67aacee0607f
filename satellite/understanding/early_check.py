"""The checks of short speech begun early, while the utterance's trailing silence is
still being waited out.

A word or two heard as a command, and a call for help, are searched again before they
are believed (short_check.py, ~0.2 s of CPU each). That search was made at the pause
that may end the utterance (``early_endpoint_ms`` of silence), so its CPU came after the
end of speech, before the first sound. At the first frame of trailing silence of short
speech (at most ``GUESS_MAX_SPEECH_SECONDS``, not a follow-on, in a room that is not
loud or reverberant there), what the streaming search has heard so far is read; if it
is an intent that would be checked, the check's search (and for a call it hears again,
the confirmation's) is made at once over the audio so far, beside the streaming search,
which goes on as before (a *guess*).

A guess may be for nothing, so it never puts off other work: its first step is done in
turn (what it reads, it reads where it was queued), the rest of its search is queued
``yielding`` (stt/steps.py), done only in the steps the frames and the decisions leave.
When the pause (or the end of the utterance) comes, the check uses the guess's search if
the streaming result heard the same words over the same span, and the room was judged
the same (loud, reverberant): a search not yet done is done then, in turn, before
anything else. What the search heard is then judged against that result as before.
Otherwise, and when the person speaks on, the guess is thrown away (a search not yet
done is cut short) and the check is made as without it. ``tally`` counts the guesses
and the ones thrown away, with the CPU they cost.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from ..nlu import trust
from ..nlu.help_answers import HELP
from ..stt.base import SearchesBeside, SttResult
from ..stt.session import HearingSession
from ..stt.settings import SttSettings
from ..stt.steps import Spent, Steps, metered
from .belief import Belief
from .short_check import EarlySearch, Searched, same_words

_LOGGER = logging.getLogger(__name__)
#: Speech (onset to the end of speech, by the VAD) longer than this is not guessed on,
#: s: only words spanning at most ``SHORT_CHECK_MAX_SPEECH_SECONDS`` (1.25 s; a call's
#: 1 s) are checked.
GUESS_MAX_SPEECH_SECONDS = 1.25


@dataclass(slots=True)
class EarlyTally:
    """What the guesses came to (since the satellite started)."""

    #: Guesses that searched (a check's search begun early).
    searched: int = 0
    #: Of those, used by the pause or the end of the utterance.
    used: int = 0
    #: Of those, thrown away: the person spoke on, or the words or the room differed.
    dropped: int = 0
    #: Of those, cut short: thrown away before their search was done.
    cut_short: int = 0
    #: The CPU of the guesses thrown away, ms (process time; of those cut short, what
    #: they had searched).
    dropped_cpu_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class _Guess:
    search: EarlySearch
    reverberant: bool
    cpu_ms: float


@dataclass(slots=True)
class _Searching:
    """A guess whose search is not done yet (queued yielding)."""

    of: SttResult
    call: bool
    reverberant: bool
    spent: Spent
    #: Its search, a step done (``metered`` into ``spent``).
    search: Steps[Searched | None]
    #: The rest of its search, then the guess made: the work queued.
    steps: Steps[None] | None = None


class EarlyCheck:
    """Guesses at short speech in its trailing silence (see above); ``enabled`` False:
    never (the checks are made at the pause, as before)."""

    def __init__(
        self, hearing: HearingSession, belief: Belief, settings: SttSettings, enabled: bool = True
    ) -> None:
        self.hearing = hearing
        self.belief = belief
        self.settings = settings
        self.enabled = enabled
        self.tally = EarlyTally()
        self._onset_seconds = 0.0
        self._guess: _Guess | None = None
        self._searching: _Searching | None = None
        #: A guess was queued in the silence going on now; one is waiting its turn; one
        #: has begun its search.
        self._asked = self._queued = self._guessed = False
        #: How often the person spoke on after a guess was queued (a guess still waiting
        #: its turn then is not made).
        self._spoke_on = 0

    def begin(self, onset_seconds: float, following_on: bool) -> None:
        """An utterance whose speech began at ``onset_seconds``; a follow-on (its audio
        holds the utterance before it) is not guessed on. (A guess on the one before it
        is settled when that one is decided, in turn.)"""
        self._onset_seconds = onset_seconds if not following_on else float("inf")
        self._asked = self._queued = self._guessed = False

    def on_frame(self, now_seconds: float, silence_seconds: float) -> None:
        """A frame of the utterance in speech, ``silence_seconds`` after its speech ended
        (0: speaking): from the first frame of silence to the pause, a guess is queued
        until one searches (what was heard so far is often half a sentence at first);
        when the person speaks on after one, it is thrown away (in turn)."""
        if silence_seconds <= 0:
            if self._asked:
                self._asked = self._guessed = False
                self._spoke_on += 1
                self.hearing.queue(self._spoke_on_steps())
            return
        speech = now_seconds - silence_seconds - self._onset_seconds
        early = self.settings.early_endpoint_ms / 1000.0
        if not self.enabled or self._guessed or self._queued or speech > GUESS_MAX_SPEECH_SECONDS:
            return
        if silence_seconds < early:
            self._asked = self._queued = True
            self.hearing.queue(self._guess_steps(now_seconds, self._spoke_on))

    def settle_steps(self, stt: SttResult) -> Steps[None]:
        """The pause (or the end) believes the streaming result ``stt`` now, the room
        judged: a guess on the same words in the same room, still to be checked, is left
        for the check to use (its search done now if it is not yet), any other is thrown
        away. Once per guess."""
        searching = self._searching
        if searching is not None and self._fits(
            searching.of, searching.call, searching.reverberant, stt
        ):
            assert searching.steps is not None
            self.hearing.work.withdraw(searching.steps)
            yield from searching.steps  # (in turn: this decision waits for nothing else)
        self._cut_short()
        guess = self._guess
        if guess is None:
            return
        if self._fits(guess.search.of, guess.search.call, guess.reverberant, stt):
            self._guess = None
            self.tally.used += 1
            return
        self._drop()

    def _fits(self, of: SttResult, call: bool, reverberant: bool, stt: SttResult) -> bool:
        """Whether a guess on ``of`` (a ``call`` for help) in a room judged ``reverberant``
        may be used for the streaming result ``stt``: the same words, to be checked, in
        the same room."""
        hearing = self.hearing
        judged = trust.reverberant(hearing.reverb_seconds, hearing.loud, self.settings)
        same_room = not hearing.loud and judged == reverberant
        checked = self.belief.short_check.applies(stt, call) is not None  # (its words' span)
        return same_room and checked and same_words(of, stt)

    def reset(self) -> None:
        """Drop the utterance in progress (a guess on it is thrown away)."""
        self._cut_short()
        self._drop()
        self._asked = self._queued = self._guessed = False

    def _guess_steps(self, now_seconds: float, spoke_on: int) -> Steps[None]:
        """A guess at ``now_seconds`` (``_search_steps``) unless the person has spoken on
        since it was queued (``spoke_on``); the next may be queued after it."""
        try:
            if spoke_on == self._spoke_on:
                self._guessed = yield from self._search_steps(now_seconds)
        finally:
            self._queued = False

    def _search_steps(self, now_seconds: float) -> Steps[bool]:
        """Read what the streaming search has heard up to ``now_seconds``; search it again
        as the check will, if it is an intent to be checked and the room lets it be: its
        first step now, the rest queued yielding. Whether it searches."""
        hearing, belief = self.hearing, self.belief
        recognizer = hearing.recognizer
        if belief.answering or not isinstance(recognizer, SearchesBeside):
            return False
        room = hearing.room_at(now_seconds)
        reverberant = trust.reverberant(room.reverb_seconds, room.loud, self.settings)
        if hearing.loud or room.loud or reverberant:
            return False  # no check will be made
        heard = recognizer.partial()
        if heard is None or not heard.text:
            return False
        intent = belief.reader.recognize(heard.text).intent
        if intent is None:
            return False
        spent = Spent()
        search = belief.short_check.search_steps(heard, intent, now_seconds, beside=True)
        searching = _Searching(
            heard, intent == HELP, reverberant, spent, metered(search, spent, time.process_time)
        )
        try:
            next(searching.search)  # what the search reads (room, audio), read in turn
        except StopIteration as done:
            if done.value is None:
                return False  # (the check would not be made)
            self._begun()
            self._made(searching, done.value)
            yield
            return True
        self._begun()
        searching.steps = self._rest_steps(searching)
        self._searching = searching
        hearing.queue(searching.steps, yielding=True)
        yield
        return True

    def _begun(self) -> None:
        """A guess's search has begun: any other is thrown away; counted."""
        self._cut_short()
        self._drop()
        self.tally.searched += 1

    def _rest_steps(self, searching: _Searching) -> Steps[None]:
        """The rest of a guess's search, then the guess made."""
        searched = yield from searching.search
        if self._searching is searching:
            self._searching = None
        if searched is not None:  # (a search begun gives a result)
            self._made(searching, searched)

    def _made(self, searching: _Searching, searched: Searched) -> None:
        """The guess's search (and a call's confirmation) heard ``searched``: left for
        the check."""
        check = self.belief.short_check
        check.early = EarlySearch(searching.of, searching.call, searched)
        cpu_ms = round(searching.spent.ms, 2)
        self._guess = _Guess(check.early, searching.reverberant, cpu_ms)
        _LOGGER.debug("Guessed on %r (%.1f ms CPU)", searching.of.text, cpu_ms)

    def _cut_short(self) -> None:
        """The guess searching now, if any, thrown away before its search is done, and
        counted."""
        searching, self._searching = self._searching, None
        if searching is None or searching.steps is None:
            return
        self.hearing.work.withdraw(searching.steps)
        searching.steps.close()
        searching.search.close()  # (the rest, if never begun, holds it unclosed)
        self.tally.dropped += 1
        self.tally.cut_short += 1
        self.tally.dropped_cpu_ms = round(self.tally.dropped_cpu_ms + searching.spent.ms, 2)
        _LOGGER.debug("Guess on %r cut short", searching.of.text)

    def _spoke_on_steps(self) -> Steps[None]:
        """The person spoke on after a guess: it is thrown away."""
        self._cut_short()
        self._drop()
        return
        yield

    def _drop(self) -> None:
        """The guess, if any, thrown away and counted."""
        guess, self._guess = self._guess, None
        if guess is None:
            return
        self.belief.short_check.early = None
        self.tally.dropped += 1
        self.tally.dropped_cpu_ms = round(self.tally.dropped_cpu_ms + guess.cpu_ms, 2)
        _LOGGER.debug("Guess on %r thrown away", guess.search.of.text)
