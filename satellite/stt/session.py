"""One utterance as the recognizer hears it: the streaming search, the room it is heard
in, and the searches aside over the utterance's audio.

The recognizer hears the microphone as it was, or denoised in a loud room (see
hearing.py), never the gained audio: the gain moves while it speaks. The room is judged
at the start of the utterance, from the audio before it (the wake word) and its first
frames, and again over the last seconds of it when it is decided: a room judged quiet
may prove loud (the noise came up, or the wake word was louder than the command). The
utterance's audio comes from the microphone history, which no one else reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
from .hearing import MicHistory, hear_denoised, other_way_frames, snr_db
from .reverberation import reverberation_seconds
from .steps import Steps, WorkQueue, one_step, timed

if TYPE_CHECKING:
    from ..stt.settings import SttSettings

#: Audio before the command (the wake word) the recognizer adapts to, s.
CONTEXT_SECONDS = 1.5
#: At most this much of an utterance's microphone audio judges the room's loudness
#: again when it is decided, s.
LOUDNESS_SECONDS = 3.0
#: ... together with this much before its speech began, s: the quiet before a command
#: is what its noise floor is measured on (a long command alone has too few quiet frames
#: between its words, and its weakest sounds were taken for a loud room's noise).
LOUDNESS_LEAD_SECONDS = 0.5
#: How long before the frame that started an utterance its speech began, at most, s.
SPEECH_ONSET_SECONDS = 0.1
#: Utterances longer than this are not searched again from their own mean, s: commands
#: are short, and the search costs a share of the utterance's length (done between
#: frames, it puts off the decision by as much).
OWN_MEAN_MAX_SECONDS = 4.0
#: A word heard at a pause must begin this long before the speech ended, s.
WORD_IN_SPEECH_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class Room:
    """How an utterance's room sounds (see ``HearingSession.room_at``)."""

    loud: bool
    #: An upper bound of its RT60, s (None: not judged).
    reverb_seconds: float | None


@dataclass(frozen=True, slots=True)
class SearchAside:
    """What a search aside from the streaming one heard, and how long it took."""

    heard: SttResult
    ms: float


class HearingSession:
    """Drives ``recognizer`` over the utterance in progress and judges its room.

    Its work is queued and done a few steps per frame (``advance``): the frames of the
    utterance, the searches aside, and the decisions on what they heard, in the order
    asked (see steps.py). The room (``loud``, ``denoised``) is what the work done so far
    has judged.
    """

    def __init__(self, recognizer: SpeechRecognizer, settings: SttSettings) -> None:
        self.recognizer = recognizer
        self.settings = settings
        #: Whether the utterance in progress is heard denoised (a loud room at its start).
        self.denoised = False
        #: Whether the room is loud: judged at the start, and again over the last seconds
        #: of microphone audio when the utterance is decided.
        self.loud = False
        #: How reverberant the room sounded over the utterance's raw microphone audio (an
        #: upper bound of its RT60, s, see reverberation.py; None: not judged): judged
        #: with ``loud`` when it is decided.
        self.reverb_seconds: float | None = None
        self.work = WorkQueue()
        self._mic: MicHistory | None = None
        self._first_seconds = 0.0
        self._speech_seconds = 0.0
        self._with_context = False
        self._warm = False  # a search has started: the live mean is no longer cold

    @property
    def busy(self) -> bool:
        """Whether work is waiting (see ``advance``)."""
        return self.work.busy

    def queue(self, steps: Steps[Any], keep: bool = False, yielding: bool = False) -> None:
        """Do ``steps`` after the work waiting (``keep``, ``yielding``: see ``WorkQueue.add``)."""
        self.work.add(steps, keep, yielding)

    def advance(self, budget: int) -> None:
        """Do up to ``budget`` steps of the waiting work."""
        self.work.advance(budget)

    def catch_up(self) -> None:
        """Do all the waiting work now."""
        self.work.finish()

    def start(
        self,
        frame: AudioChunk,
        frames: Sequence[AudioChunk],
        continuous: bool,
        mic: MicHistory | None,
    ) -> None:
        """Speech started at ``frame``: judge the room and search the recorder's
        ``frames`` so far (from the first, pre-roll included). After a wake word (not
        ``continuous``) the audio before them is the context the search adapts to.
        Queued: done when the work before it is."""
        self.queue(self._start_steps(frame, list(frames), continuous, mic))

    def _start_steps(
        self,
        frame: AudioChunk,
        frames: Sequence[AudioChunk],
        continuous: bool,
        mic: MicHistory | None,
    ) -> Steps[None]:
        first = frames[0].timestamp_seconds if frames else frame.timestamp_seconds
        context = None
        self.denoised = False
        self._mic = mic
        self._first_seconds = first
        self._with_context = not continuous
        # from where the speech was heard (the pre-roll may hold the wake word's end)
        self._speech_seconds = frame.timestamp_seconds - SPEECH_ONSET_SECONDS
        if mic is not None:
            before = mic.before(first, CONTEXT_SECONDS)
            heard = b"".join(mic.get(f).samples for f in frames)
            self.denoised = hear_denoised(
                self.settings.hearing,
                (before.samples if before else b"") + heard,
                self.settings.denoise_below_db,
            )
            frames = [mic.get(f, self.denoised) for f in frames]
            if not continuous:
                context = mic.context(first, CONTEXT_SECONDS, self.denoised, self._warm)
        self.loud = self.denoised
        self.reverb_seconds = None
        yield from self._search_steps(first, frames, context)

    def take_up(
        self,
        mic: MicHistory | None,
        first_seconds: float,
        *,
        loud: bool = False,
        denoised: bool = False,
    ) -> None:
        """Take up an utterance whose speech began at ``first_seconds`` in ``mic`` (None:
        it cannot be heard again), in a room judged ``loud``, heard ``denoised``, with no
        context and no search: what ``start`` leaves, for an utterance the recognizer
        searched by itself (a test's recognizer)."""
        self._mic = mic
        self._first_seconds = self._speech_seconds = first_seconds
        self._with_context = False
        self.loud = loud
        self.denoised = denoised

    def hear(self, frame: AudioChunk, mic: MicHistory | None) -> None:
        """Feed the search the next frame, as the microphone gave it or denoised (as the
        room is judged when the frame's turn comes). Queued."""
        self.queue(self._hear_steps(frame, mic))

    def _hear_steps(self, frame: AudioChunk, mic: MicHistory | None) -> Steps[None]:
        self.recognizer.process(mic.get(frame, self.denoised) if mic else frame)
        yield

    def resume_steps(self) -> Steps[None]:
        """The person went on speaking after a pause: the recognizer's ``resume``."""
        if isinstance(self.recognizer, SearchesInSteps):
            yield from self.recognizer.resume_steps()
        else:
            yield from one_step(self.recognizer.resume)

    def judge_room_steps(self, now_seconds: float) -> Steps[None]:
        """The room over the utterance up to ``now_seconds``: how reverberant it sounds
        (``reverb_seconds``), and whether it is loud. A room judged quiet at the start may
        prove loud over the utterance itself. Then a search that heard the raw microphone
        hears the utterance again, denoised (in ``auto``)."""
        if self._mic is None:
            return
        room = self.room_at(now_seconds)
        self.reverb_seconds = room.reverb_seconds
        if self.loud or not room.loud:
            return
        self.loud = True
        if self.settings.hearing == "auto" and not self.denoised:
            yield from self._hear_again_denoised_steps(now_seconds)

    def room_at(self, now_seconds: float) -> Room:
        """The room as ``judge_room_steps`` would judge it at ``now_seconds``, with nothing
        changed (the room judged so far when the history cannot tell)."""
        if self._mic is None:
            return Room(self.loud, self.reverb_seconds)
        spoken = self._mic.before(now_seconds + 1e-3, max(0.01, now_seconds - self._speech_seconds))
        reverb = None if spoken is None else reverberation_seconds(spoken.samples)
        if self.loud:
            return Room(True, reverb)
        span = min(LOUDNESS_SECONDS, now_seconds - self._speech_seconds) + LOUDNESS_LEAD_SECONDS
        heard = self._mic.before(now_seconds + 1e-3, span)
        loud = heard is not None and snr_db(heard.samples) < self.settings.denoise_below_db
        return Room(loud, reverb)

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

    def search_other_way_steps(self, heard_until: float) -> Steps[SearchAside | None]:
        """The utterance up to ``heard_until`` heard the other way (raw if it was heard
        denoised, and the other way round), searched whole: None when the recognizer
        cannot or the history no longer holds all of it."""
        heard = self._other_way_audio(heard_until)
        recognizer = self.recognizer
        if heard is None or not isinstance(recognizer, SearchesWhole):
            return None
        if isinstance(recognizer, SearchesInSteps):
            steps = recognizer.search_whole_steps(*heard)
        else:
            steps = one_step(lambda: recognizer.search_whole(*heard))
        other, ms = yield from timed(steps)
        return SearchAside(other, ms)

    def _hear_again_denoised_steps(self, now_seconds: float) -> Steps[None]:
        """Search the utterance so far again, denoised (when the microphone history still
        holds all of it)."""
        heard = self._utterance_audio(now_seconds, denoised=True)
        if heard is None:
            return
        self.denoised = True
        yield from self._search_steps(self._first_seconds, *heard)

    def _other_way_audio(self, now: float) -> tuple[list[AudioChunk], AudioChunk | None] | None:
        """The utterance and its context heard the other way: raw if heard denoised (or
        ``stt.other_way``: denoised again from the raw microphone, with the room before it
        as context even with no wake word: the mean the last utterance left misheard a
        loud room), denoised if raw."""
        way = self.settings.other_way
        if not self.denoised or way == "raw" or self._mic is None:
            return self._utterance_audio(now, not self.denoised)
        return other_way_frames(self._mic, self._first_seconds, now, way, CONTEXT_SECONDS)

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


def words_in_speech(heard: SttResult, speech_end_seconds: float) -> bool:
    """Whether every word begins while the person was still speaking.

    Paused mid-command ("set a timer for ... ten minutes"), a grammar search ended at
    the pause completes the sentence with words laid over the silence ("... for two
    hours"): such a sentence was not said, so the utterance must go on.
    """
    latest = speech_end_seconds - WORD_IN_SPEECH_SECONDS
    return bool(heard.words) and all(w.start_seconds < latest for w in heard.words)
