"""What is worked out for an utterance's streaming results: the records ``Belief``
keeps (understanding/belief.py) and what the answers read from them (answers.py)."""

from __future__ import annotations

from dataclasses import dataclass

from ..nlu.recognizer import IntentResult
from ..stt.base import SttResult
from ..stt.searches_again import SearchAside


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
