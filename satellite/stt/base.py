"""The speech-to-text engine protocol and its result."""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..audio.chunk import AudioChunk

if TYPE_CHECKING:
    from .answer_grammar import AnswerSearches
    from .other_way_stream import OtherWayStream


@dataclass(frozen=True, slots=True)
class WordTiming:
    """One recognised word with its time span, seconds from the start of input, and how
    well it fits against a free phone loop per 10 ms frame (engines that can tell)."""

    word: str
    start_seconds: float
    end_seconds: float
    score: float | None = None


def confidence(margin: float) -> float:
    """0-1 from how far a per-frame score lies above the score needed (0.5 at the need)."""
    return round(1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, margin / 4.0)))), 4)


@dataclass(frozen=True, slots=True)
class SttResult:
    """A finished utterance: text, confidence (0-1), word timings.

    ``in_grammar`` is False when the recognizer judged the speech to be outside the
    closed domain (the text is then an open-vocabulary transcript or empty).
    """

    text: str
    confidence: float
    words: tuple[WordTiming, ...] = field(default=())
    in_grammar: bool = True
    #: How well the speech fits the closed domain (engines that can tell): the
    #: per-frame score rejection is decided on.
    score_per_frame: float | None = None


class SpeechRecognizer(Protocol):
    """Streaming recognizer: ``start``, 10 ms frames while the person speaks, ``finish``."""

    name: str

    def start(self, timestamp_seconds: float, context: AudioChunk | None = None) -> None:
        """Begin an utterance whose first frame starts at ``timestamp_seconds``;
        ``context`` is audio just before it (the wake word) to adapt to."""

    def process(self, frame: AudioChunk) -> None:
        """Feed the next 10 ms frame (16 kHz mono 16-bit)."""

    def pause(self) -> SttResult | None:
        """At a pause in speech: what was heard so far, or None when the engine cannot
        tell before the end. If the utterance then ends, ``finish`` gives the same."""

    def resume(self) -> None:
        """The person went on speaking after ``pause``."""

    def finish(self) -> SttResult:
        """End the utterance and return the result."""

    def reset(self) -> None:
        """Drop any utterance in progress."""


@runtime_checkable
class SearchesWhole(Protocol):
    """A recognizer that can also search other audio whole between streaming searches
    (the utterance heard another way, for a second opinion)."""

    def search_whole(
        self, frames: Sequence[AudioChunk], context: AudioChunk | None = None
    ) -> SttResult:
        """Search ``frames`` (after ``context``) while no streaming search runs."""


@runtime_checkable
class SearchesOwnMean(Protocol):
    """A recognizer that can search an utterance again, whole, normalised by its own
    cepstral mean, and score the result as its streaming search does."""

    def search_own_mean(self, frames: Sequence[AudioChunk]) -> SttResult:
        """Search ``frames`` while no streaming search runs."""


@runtime_checkable
class SearchesInSteps(Protocol):
    """A recognizer whose bursts of work can be done a frame at a time, between the frame
    loop's frames (see steps.py): each yields after a step."""

    def resume_steps(self) -> Generator[None, None, None]:
        """``resume``, a step at a time."""

    def search_whole_steps(
        self, frames: Sequence[AudioChunk], context: AudioChunk | None = None
    ) -> Generator[None, None, SttResult]:
        """``search_whole``, a step at a time."""

    def search_own_mean_steps(
        self, frames: Sequence[AudioChunk], mean_of: Sequence[AudioChunk] | None = None
    ) -> Generator[None, None, SttResult]:
        """``search_own_mean``, a step at a time (``mean_of``: frames whose mean it starts
        from, the utterance's when ``frames`` are only a span of it)."""


@runtime_checkable
class SearchesBeside(Protocol):
    """A recognizer that can tell what its streaming search has heard so far and search
    the utterance again from its own mean while the streaming search goes on."""

    def partial(self) -> SttResult | None:
        """What the streaming search has heard so far (not scored), the search going on."""

    def search_beside_steps(
        self, frames: Sequence[AudioChunk], mean_of: Sequence[AudioChunk] | None = None
    ) -> Generator[None, None, SttResult]:
        """``search_own_mean_steps`` with the streaming search left going on."""


@runtime_checkable
class HearsAnswers(Protocol):
    """A recognizer that can search the answers to the help question instead of the
    commands (nlu/help_answers.py, stt/answer_grammar.py)."""

    @property
    def answer_searches(self) -> AnswerSearches:
        """Which grammar it searches (``hear``: from the next utterance on)."""


@runtime_checkable
class HearsRooms(Protocol):
    """A recognizer that can hear a loud room with a model of its own."""

    def hear_room(self, loud: bool) -> None:
        """Search from the next utterance on as for a ``loud`` room or a quiet one."""


@runtime_checkable
class HearsOtherWay(Protocol):
    """A recognizer that can search the utterance heard the other way while the person
    speaks, beside its streaming search (a noisy room's second hearing)."""

    @property
    def other_way(self) -> OtherWayStream | None:
        """The search (None: it has none)."""
