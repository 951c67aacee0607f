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

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..audio.chunk import AudioChunk
from ..timing import ms_since
from .base import (
    HearsAnswers,
    HearsOtherWay,
    SearchesInSteps,
    SpeechRecognizer,
    SttResult,
)
from .hearing import MicHistory, hear_denoised, snr_db
from .reverberation import reverberation_seconds
from .searches_again import CONTEXT_SECONDS, SearchAside, SearchesAgain
from .steps import Steps, WorkQueue, one_step

if TYPE_CHECKING:
    from ..stt.settings import SttSettings
    from .other_way_stream import OtherWayStream

#: At most this much of an utterance's microphone audio judges the room's loudness
#: again when it is decided, s.
LOUDNESS_SECONDS = 3.0
#: ... together with this much before its speech began, s: the quiet before a command
#: is what its noise floor is measured on (a long command alone has too few quiet frames
#: between its words, and its weakest sounds were taken for a loud room's noise).
LOUDNESS_LEAD_SECONDS = 0.5
#: How long before the frame that started an utterance its speech began, at most, s.
SPEECH_ONSET_SECONDS = 0.1
#: A word heard at a pause must begin this long before the speech ended, s.
WORD_IN_SPEECH_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class Room:
    """How an utterance's room sounds (see ``HearingSession.room_at``)."""

    loud: bool
    #: An upper bound of its RT60, s (None: not judged).
    reverb_seconds: float | None
    #: Its speech-to-noise ratio over the utterance's last seconds, dB (inf: not judged).
    snr_db: float = math.inf


class HearingSession(SearchesAgain):
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
        #: The room's speech-to-noise ratio over the utterance's last seconds, dB (inf:
        #: not judged): judged with ``loud`` when it is decided.
        self.snr_db = math.inf
        self.work = WorkQueue()
        self._mic: MicHistory | None = None
        self._first_seconds = 0.0
        self._speech_seconds = 0.0
        self._with_context = False
        self._warm = False  # a search has started: the live mean is no longer cold
        #: The utterance is heard the other way as it comes (a noisy room's second
        #: hearing: other_way_stream.py).
        self._other_way: OtherWayStream | None = None

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
        self._stop_other_way()
        if mic is not None:
            before = mic.before(first, CONTEXT_SECONDS)
            audio = (before.samples if before else b"") + b"".join(
                mic.get(f).samples for f in frames
            )
            ratio = snr_db(audio)
            self.denoised = hear_denoised(
                self.settings.hearing, ratio, self.settings.denoise_below_db
            )
            if not self.denoised and ratio < self.settings.agree_below_db:
                yield from self._start_other_way_steps(mic, first, frames, continuous)
            frames = [mic.get(f, self.denoised) for f in frames]
            if not continuous:
                context = mic.context(first, CONTEXT_SECONDS, self.denoised, self._warm)
        self.loud = self.denoised
        self.reverb_seconds = None
        self.snr_db = math.inf
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
        self._stop_other_way()
        self.loud = loud
        self.denoised = denoised

    def hear(self, frame: AudioChunk, mic: MicHistory | None) -> None:
        """Feed the search the next frame, as the microphone gave it or denoised (as the
        room is judged when the frame's turn comes). Queued."""
        self.queue(self._hear_steps(frame, mic))

    def _hear_steps(self, frame: AudioChunk, mic: MicHistory | None) -> Steps[None]:
        self.recognizer.process(mic.get(frame, self.denoised) if mic else frame)
        if self._other_way is not None and mic is not None:
            self._other_way.process(mic.get(frame, True))
        yield

    def _start_other_way_steps(
        self,
        mic: MicHistory,
        first: float,
        frames: Sequence[AudioChunk],
        continuous: bool,
    ) -> Steps[None]:
        """Hear the utterance starting in a noisy room the other way (denoised) as it
        comes, from its first ``frames`` on, with the context a search of it after the
        pause would have (``search_other_way_steps``): when the recognizer can, and the
        commands are heard (an answer to the help question is never heard twice)."""
        recognizer = self.recognizer
        stream = recognizer.other_way if isinstance(recognizer, HearsOtherWay) else None
        if stream is None:
            return
        if isinstance(recognizer, HearsAnswers) and recognizer.answer_searches.on:
            return
        stream.start(mic.context(first, 0.0 if continuous else CONTEXT_SECONDS, True, True))
        self._other_way = stream
        yield
        for frame in frames:
            stream.process(mic.get(frame, True))
            yield

    def _stop_other_way(self) -> None:
        """No longer hear the utterance the other way as it comes."""
        if self._other_way is not None:
            self._other_way.stop()
        self._other_way = None

    def search_other_way_steps(
        self, heard_until: float, since: float | None = None
    ) -> Steps[SearchAside | None]:
        """``SearchesAgain.search_other_way_steps``; the whole utterance heard denoised as
        it came, when it was (``_start_other_way_steps``): ended now, not searched again."""
        if since is None and self._other_way is not None and not self.denoised:
            started = time.perf_counter()
            heard = self._other_way.heard()
            if heard is not None:
                return SearchAside(heard, ms_since(started))
        return (yield from super().search_other_way_steps(heard_until, since))

    def resume_steps(self) -> Steps[None]:
        """The person went on speaking after a pause: the recognizer's ``resume``, and the
        hearing the other way as it comes searched again too."""
        if isinstance(self.recognizer, SearchesInSteps):
            yield from self.recognizer.resume_steps()
        else:
            yield from one_step(self.recognizer.resume)
        if self._other_way is not None:
            yield from self._other_way.resume_steps()

    def judge_room_steps(self, now_seconds: float) -> Steps[None]:
        """The room over the utterance up to ``now_seconds``: how reverberant it sounds
        (``reverb_seconds``), and whether it is loud. A room judged quiet at the start may
        prove loud over the utterance itself. Then a search that heard the raw microphone
        hears the utterance again, denoised (in ``auto``)."""
        if self._mic is None:
            return
        room = self.room_at(now_seconds)
        self.reverb_seconds = room.reverb_seconds
        self.snr_db = room.snr_db
        if self.loud or not room.loud:
            return
        self.loud = True
        if self.settings.hearing == "auto" and not self.denoised:
            yield from self._hear_again_denoised_steps(now_seconds)

    def room_at(self, now_seconds: float) -> Room:
        """The room as ``judge_room_steps`` would judge it at ``now_seconds``, with nothing
        changed (the room judged so far when the history cannot tell)."""
        if self._mic is None:
            return Room(self.loud, self.reverb_seconds, self.snr_db)
        spoken = self._mic.before(now_seconds + 1e-3, max(0.01, now_seconds - self._speech_seconds))
        reverb = None if spoken is None else reverberation_seconds(spoken.samples)
        span = min(LOUDNESS_SECONDS, now_seconds - self._speech_seconds) + LOUDNESS_LEAD_SECONDS
        heard = self._mic.before(now_seconds + 1e-3, span)
        ratio = math.inf if heard is None else snr_db(heard.samples)
        return Room(self.loud or ratio < self.settings.denoise_below_db, reverb, ratio)

    @property
    def noisy(self) -> bool:
        """Whether the room, not loud, still has noise close enough under the speech that
        what is heard must come out the same heard the other way (``stt.agree_below_db``,
        0: never): white or pink noise 20 dB below the speech (snr 23-29 dB here) made
        "thirty" "thirteen" and "what time is it" a call for help, 0.96-0.99 sure."""
        return not self.loud and self.snr_db < self.settings.agree_below_db

    def _hear_again_denoised_steps(self, now_seconds: float) -> Steps[None]:
        """Search the utterance so far again, denoised (when the microphone history still
        holds all of it)."""
        heard = self._utterance_audio(now_seconds, denoised=True)
        if heard is None:
            return
        self._stop_other_way()
        self.denoised = True
        yield from self._search_steps(self._first_seconds, *heard)


def words_in_speech(heard: SttResult, speech_end_seconds: float) -> bool:
    """Whether every word begins while the person was still speaking.

    Paused mid-command ("set a timer for ... ten minutes"), a grammar search ended at
    the pause completes the sentence with words laid over the silence ("... for two
    hours"): such a sentence was not said, so the utterance must go on.
    """
    latest = speech_end_seconds - WORD_IN_SPEECH_SECONDS
    return bool(heard.words) and all(w.start_seconds < latest for w in heard.words)
