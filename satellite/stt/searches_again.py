"""The searches again over an utterance's audio, from the microphone history: from its
own cepstral mean, the other way (raw or denoised), and over the person's own words
alone. Mixed into ``HearingSession`` (session.py), whose state they read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..audio.chunk import AudioChunk, join_frames
from .base import (
    HearsRooms,
    SearchesBeside,
    SearchesInSteps,
    SearchesOwnMean,
    SearchesWhole,
    SpeechRecognizer,
    SttResult,
)
from .hearing import MicHistory, other_way_frames
from .steps import Steps, one_step, timed

if TYPE_CHECKING:
    from ..stt.settings import SttSettings

#: Audio before the command (the wake word) the recognizer adapts to, s.
CONTEXT_SECONDS = 1.5
#: Utterances longer than this are not searched again from their own mean, s: commands
#: are short, and the search costs a share of the utterance's length (done between
#: frames, it puts off the decision by as much).
OWN_MEAN_MAX_SECONDS = 4.0


@dataclass(frozen=True, slots=True)
class SearchAside:
    """What a search aside from the streaming one heard, and how long it took."""

    heard: SttResult
    ms: float


class SearchesAgain:
    """The searches again of ``HearingSession`` (its state, set as it starts and hears an
    utterance)."""

    recognizer: SpeechRecognizer
    settings: SttSettings
    denoised: bool
    loud: bool
    _mic: MicHistory | None
    _first_seconds: float
    _with_context: bool
    _warm: bool

    def search_own_mean_steps(
        self,
        heard_until: float,
        since: float | None = None,
        beside: bool = False,
        words_only: bool = False,
    ) -> Steps[SearchAside | None]:
        """The utterance up to ``heard_until`` (heard as it was, raw or denoised) searched
        again from its own cepstral mean (``since``: only its audio from then on, the span
        of its words, from the whole utterance's mean): None when that is off, the
        recognizer cannot, the room is loud (searching noise costs more, and the loud
        room's needs let nothing through that way), the utterance is too long or the
        history lost it (``beside``: the streaming search goes on meanwhile, if it can;
        ``words_only``: by the grammar alone, beside it, unscored: 2/3 of the CPU)."""
        if not self.settings.own_mean_retry or self.loud:
            return None
        if heard_until - self._first_seconds > OWN_MEAN_MAX_SECONDS:
            return None
        whole = self._utterance_frames(heard_until, self.denoised)
        frames = whole
        if whole is not None and since is not None:
            frames = [f for f in whole if f.timestamp_seconds >= since - 1e-6]
        if not whole or not frames:
            return None
        steps = _own_mean_steps(self.recognizer, frames, whole, beside, words_only)
        if steps is None:
            return None
        heard, ms = yield from timed(steps)
        return SearchAside(heard, ms)

    def search_other_way_steps(
        self, heard_until: float, since: float | None = None
    ) -> Steps[SearchAside | None]:
        """The utterance up to ``heard_until`` (``since``: from then on) heard the other
        way (raw if it was heard denoised, and the other way round), searched whole: None
        when the recognizer cannot or the history no longer holds all of it."""
        heard = self._other_way_audio(heard_until, since)
        recognizer = self.recognizer
        if heard is None or not isinstance(recognizer, SearchesWhole):
            return None
        if isinstance(recognizer, SearchesInSteps):
            steps = recognizer.search_whole_steps(*heard)
        else:
            steps = one_step(lambda: recognizer.search_whole(*heard))
        other, ms = yield from timed(steps)
        return SearchAside(other, ms)

    def utterance_and_room(
        self, heard_until: float, room_seconds: float
    ) -> tuple[list[AudioChunk], list[AudioChunk]] | None:
        """The utterance up to ``heard_until`` and the ``room_seconds`` before it, as the
        microphone gave them, those before it without the satellite's own voice (None
        when the history no longer holds the utterance)."""
        utterance = self._utterance_frames(heard_until, denoised=False)
        if utterance is None or self._mic is None:
            return None
        before = self._mic.room_frames(self._first_seconds - room_seconds, self._first_seconds)
        return utterance, before

    def search_span_steps(self, start: float, end: float) -> Steps[SearchAside | None]:
        """The utterance's audio from ``start`` to ``end`` searched again alone, as the
        utterance was heard (raw or denoised, the room's model, the same context), once
        the streaming search has finished (None: the history no longer holds it)."""
        frames = [] if self._mic is None else self._mic.frames(start, end, self.denoised)
        if self._mic is None or not frames:
            return None
        span = CONTEXT_SECONDS if self._with_context else 0.0
        context = self._mic.context(self._first_seconds, span, self.denoised, self._warm)
        words, ms = yield from timed(self._searched_steps(start, frames, context))
        return SearchAside(words, ms)

    def _other_way_audio(
        self, now: float, since: float | None = None
    ) -> tuple[list[AudioChunk], AudioChunk | None] | None:
        """The utterance (``since``: only its audio from then on) and its context heard
        the other way: raw if heard denoised (or ``stt.other_way``: denoised again from
        the raw microphone, with the room before it as context even with no wake word:
        the mean the last utterance left misheard a loud room), denoised if raw."""
        way = self.settings.other_way
        if not self.denoised or way == "raw" or self._mic is None:
            heard = self._utterance_audio(now, not self.denoised)
            if heard is None or since is None:
                return heard
            frames = [f for f in heard[0] if f.timestamp_seconds >= since - 1e-6]
            return (frames, heard[1]) if frames else None
        first = self._first_seconds if since is None else since
        return other_way_frames(self._mic, first, now, way, CONTEXT_SECONDS)

    def _utterance_audio(
        self, now_seconds: float, denoised: bool
    ) -> tuple[list[AudioChunk], AudioChunk | None] | None:
        """The utterance's frames so far and the context before them, raw or denoised,
        from the microphone history (None when it no longer holds all of them)."""
        frames = self._utterance_frames(now_seconds, denoised)
        if frames is None or self._mic is None:
            return None
        span = CONTEXT_SECONDS if self._with_context else 0.0
        return frames, self._mic.context(self._first_seconds, span, denoised, self._warm)

    def _utterance_frames(self, now_seconds: float, denoised: bool) -> list[AudioChunk] | None:
        """The utterance's frames so far, raw or denoised, from the microphone history
        (None when it no longer holds all of them)."""
        if self._mic is None:
            return None
        frames = self._mic.frames(self._first_seconds, now_seconds + 1e-3, denoised)
        if not frames or frames[0].timestamp_seconds > self._first_seconds + 1e-3:
            return None
        return frames

    def _searched_steps(
        self, first: float, frames: Sequence[AudioChunk], context: AudioChunk | None
    ) -> Steps[SttResult]:
        """``_search_steps`` to its end: what the search heard."""
        yield from self._search_steps(first, frames, context)
        return self.recognizer.finish()

    def _search_steps(
        self, first: float, frames: Sequence[AudioChunk], context: AudioChunk | None
    ) -> Steps[None]:
        """Start a search at ``first`` and feed it the frames heard since, with the model
        for the room as judged (a loud room's, if the recognizer has one)."""
        if isinstance(self.recognizer, HearsRooms):
            self.recognizer.hear_room(self.loud)
        self.recognizer.start(first, context)
        self._warm = True
        yield
        for frame in frames:
            self.recognizer.process(frame)
            yield


def _own_mean_steps(
    recognizer: SpeechRecognizer,
    frames: list[AudioChunk],
    whole: list[AudioChunk],
    beside: bool,
    words_only: bool,
) -> Steps[SttResult] | None:
    """``recognizer``'s search of ``frames`` from the mean of ``whole`` (see
    ``HearingSession.search_own_mean_steps``), or None when it cannot make it."""
    if not isinstance(recognizer, SearchesOwnMean):
        return None
    if words_only:  # (the same words as with the phone loop)
        if not isinstance(recognizer, SearchesWhole):
            return None
        own = join_frames(whole)
        if isinstance(recognizer, SearchesInSteps):
            return recognizer.search_whole_steps(frames, own)
        return one_step(lambda: recognizer.search_whole(frames, own))
    if beside:
        if not isinstance(recognizer, SearchesBeside):
            return None
        return recognizer.search_beside_steps(frames, whole)
    if isinstance(recognizer, SearchesInSteps):
        if frames is whole:
            return recognizer.search_own_mean_steps(frames)
        return recognizer.search_own_mean_steps(frames, whole)  # a span, the whole's mean
    return one_step(lambda: recognizer.search_own_mean(frames))
