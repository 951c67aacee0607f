"""Stop words heard over the satellite's own voice: the check that runs while it speaks.

While a reply plays, the echo canceller (``frontend.echo``) takes most of the
satellite's voice out of the microphone, never all of it. Two tests must both pass
before a word stops the reply:

1. PocketSphinx's keyphrase search (``kws``), limited to the stop words, spots one of
   them in the echo-cancelled audio (it scores each against a free phone loop, so the
   rest of the speech is its garbage model). Alone it fires on what is left of the
   satellite's own voice.
2. The double-talk gate: someone other than the speaker was there. Over the last
   ``WINDOW_FRAMES`` the cancelled audio must be ``margin_db`` louder than what the
   canceller leaves of the echo: the microphone over the echo loss it reached in the
   ``HISTORY_FRAMES`` before (measured on what it heard), plus the noise floor (where
   nothing was played the canceller takes nothing out).
   The satellite's own voice, however much is left of it, keeps that ratio; a person,
   whom the canceller does not take out, raises it. Before the canceller has heard
   enough (``MIN_HISTORY_FRAMES``) nothing passes: a stop is missed rather than made up.
   The search often spots a word before its end: the gate judges it again each frame
   for ``PENDING_FRAMES``, as more of the word comes in.

In a ringing room (RT60 0.6 s) that ratio does not hold where the reply goes quiet: the
microphone then hears the room ringing on past the canceller's filter, which it does not
take out, and the cancelled audio comes within a fixed margin of the microphone. So the
gate's measure is taken less how far the microphone over the window fell below its
history beyond ``RING_ALLOWANCE_DB`` (``DoubleTalkGate.ringing_db``): a person adds to
what the microphone hears, the ringing only fades. And the margin learns from the
satellite's own voice (``LearntMargin``, as the talk-over check's does): a spotted word
must pass ``STOP_HEADROOM_DB`` above the most the gate measured at words spotted in each
of the satellite's last ``LEARN_REPLIES`` replies that played alone, never less than
``margin_db``. It learns only from the frames it judged (the measure it compares), so a
person's word it missed, whose window never reached the margin, lifts it by the headroom
at most. Its headroom is smaller than the talk-over check's: the ringing is already off
the measure, and a larger one cost stop words at RT60 0.6 s and saved no reply.

Measured on a simulated room (``python -m bench.duplex``, bench/results/duplex.json).
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..audio.chunk import AudioChunk
from ..errors import MissingDependencyError, SatelliteError
from .lexicon import (
    default_dictionary,
    dictionary_words,
    grammar_dictionary,
    pocketsphinx_model_dir,
)

#: The keyphrase search's threshold (a likelihood against the phone loop): lower hears
#: more of the person and more of the satellite's own voice (bench/duplex.py).
KWS_THRESHOLD = 1e-50
#: Frames (10 ms) the double-talk gate looks back over at a spotted word.
WINDOW_FRAMES = 50
#: Frames before that window over which the canceller's echo loss is measured.
HISTORY_FRAMES = 150
#: Frames after a spotted word during which the gate may still let it through.
PENDING_FRAMES = 20
#: The noise floor: this percentile of the cancelled audio's power over the history.
NOISE_PERCENTILE = 10
#: History the gate needs before anything can pass.
MIN_HISTORY_FRAMES = 10
#: A learnt margin stays this far above the most measured on the satellite's own voice, dB.
HEADROOM_DB = 3.0
#: The stop words' margin: this far above it (their measure is taken less the ringing).
STOP_HEADROOM_DB = 2.0
#: How far the microphone may fall below its history before the gate calls it ringing, dB.
RING_ALLOWANCE_DB = 4.0
#: Replies whose own-voice measure a margin learns from.
LEARN_REPLIES = 10


@dataclass(frozen=True, slots=True)
class StopHeard:
    """A stop word heard over the reply, ending at ``timestamp_seconds``."""

    word: str
    timestamp_seconds: float
    #: How much louder the cancelled audio was than the echo left of the reply, dB.
    margin_db: float


class DoubleTalkGate:
    """How much more the cancelled audio holds than the echo the canceller leaves."""

    def __init__(self) -> None:
        length = WINDOW_FRAMES + HISTORY_FRAMES
        self._mic: deque[float] = deque(maxlen=length)
        self._out: deque[float] = deque(maxlen=length)
        self._echo: deque[bool] = deque(maxlen=length)
        self._last_loss: float | None = None

    def add(self, mic: bytes, cancelled: bytes, echo: bool = True) -> None:
        """One 10 ms frame: the microphone and the canceller's output (``echo``: it had
        the speaker's echo to take out; False where it passed the microphone through)."""
        self._mic.append(power(mic))
        self._out.append(power(cancelled))
        self._echo.append(echo)

    def excess_db(self, window_frames: int = WINDOW_FRAMES, carry: bool = False) -> float | None:
        """Over the last ``window_frames``: the cancelled audio's power against what the
        canceller would leave of the microphone's echo (the microphone over the echo loss
        measured in the history before it, plus the noise floor), dB (None: too little
        history). ``carry`` (the talk-over check): the loss is measured only where there
        was echo to take out (a person heard while nothing played, passed through, would
        make it look small), and with too little echo in the history (a reply just
        began) it is the loss measured last (the canceller keeps what it learnt of the
        room between replies). Without it (the stop words) the loss is measured as
        bench/duplex.py measured it: over every frame of the history."""
        history = len(self._mic) - window_frames
        if history < MIN_HISTORY_FRAMES:
            return None
        mic, out = np.asarray(self._mic), np.asarray(self._out)
        echoed = np.asarray(self._echo)[:history] if carry else np.ones(history, bool)
        if np.count_nonzero(echoed) >= MIN_HISTORY_FRAMES:
            loss = mic[:history][echoed].sum() / out[:history][echoed].sum()
            if carry:
                self._last_loss = float(loss)
        elif carry and self._last_loss is not None:
            loss = self._last_loss
        else:
            return None
        # where the canceller had nothing to take out (silence, noise) it leaves all
        floor = float(np.percentile(out[:history], NOISE_PERCENTILE))
        expected = mic[history:] / loss + floor
        return float(10 * np.log10(out[history:].sum() / expected.sum()))

    def excess_less_ringing_db(
        self,
        window_frames: int = WINDOW_FRAMES,
        carry: bool = False,
        allowance_db: float = RING_ALLOWANCE_DB,
    ) -> float | None:
        """``excess_db`` less ``ringing_db`` over the same window: the measure both
        double-talk checks compare with their margin (None: too little history)."""
        excess = self.excess_db(window_frames, carry)
        return None if excess is None else excess - self.ringing_db(window_frames, allowance_db)

    def ringing_db(
        self, window_frames: int = WINDOW_FRAMES, allowance_db: float = RING_ALLOWANCE_DB
    ) -> float:
        """How far the microphone over the last ``window_frames`` fell below its history
        beyond ``allowance_db``, dB (0: it did not). Where the reply went quiet, what
        the microphone still hears of it is the room ringing on past the canceller's
        filter, which the canceller does not take out: the cancelled audio then comes
        close to the microphone although nobody else spoke. A person adds to what the
        microphone hears and seldom lets it fall that far."""
        history = len(self._mic) - window_frames
        if history < MIN_HISTORY_FRAMES:
            return 0.0
        mic = np.asarray(self._mic)
        fall = 10 * np.log10(mic[:history].mean() / mic[history:].mean())
        return max(0.0, float(fall) - allowance_db)

    def reset(self) -> None:
        self._mic.clear()
        self._out.clear()
        self._echo.clear()
        self._last_loss = None


class LearntMargin:
    """A double-talk margin that learns from the satellite's own voice: the larger of
    ``base_db`` and ``headroom_db`` above the most measured on each of the last
    ``LEARN_REPLIES`` replies that played with nobody over them. A quiet room keeps the
    base; a ringing one raises it, and hears fewer people rather than itself.

    ``measure`` each value the gate compares while a reply plays; ``end_reply`` when it
    played to its end (learnt), ``start_reply`` when it starts or someone spoke over it
    (what was measured on it is dropped)."""

    def __init__(self, base_db: float, headroom_db: float = HEADROOM_DB) -> None:
        self.base_db = base_db
        self.headroom_db = headroom_db
        #: The most measured on each of the last replies (the satellite alone), dB.
        self.own_db: deque[float] = deque(maxlen=LEARN_REPLIES)
        self._reply_db = float("-inf")

    @property
    def now_db(self) -> float:
        """The margin a measure must reach now, dB."""
        return max(self.base_db, max(self.own_db, default=float("-inf")) + self.headroom_db)

    def measure(self, excess_db: float) -> None:
        """One value the gate measured on the reply playing, dB."""
        self._reply_db = max(self._reply_db, excess_db)

    def start_reply(self) -> None:
        """A reply starts, or someone spoke over it: nothing measured on it to learn."""
        self._reply_db = float("-inf")

    def end_reply(self) -> None:
        """The reply played to its end with nobody over it: learn what was measured."""
        if self._reply_db > float("-inf"):
            self.own_db.append(self._reply_db)
        self.start_reply()

    def forget(self) -> None:
        """A new room (the canceller starts again): nothing learnt."""
        self.start_reply()
        self.own_db.clear()


def power(samples: bytes | npt.NDArray[np.int16]) -> float:
    """Mean power of 16-bit samples, plus one (never zero)."""
    x = (np.frombuffer(samples, dtype="<i2") if isinstance(samples, bytes) else samples).astype(
        np.float64
    )
    return float(np.mean(x * x)) + 1.0 if len(x) else 1.0


class StopWordSpotter:
    """The stop words, spotted in the echo-cancelled audio while the satellite speaks.

    Call ``start`` when a reply begins, ``process`` with each 10 ms frame (the
    microphone as heard and as cancelled) until it gives a ``StopHeard``, ``stop``
    when the reply ends.
    """

    name = "stop_words"

    def __init__(
        self,
        words: tuple[str, ...],
        margin_db: float,
        language: str = "en",
        threshold: float = KWS_THRESHOLD,
        headroom_db: float = STOP_HEADROOM_DB,
        ring_allowance_db: float = RING_ALLOWANCE_DB,
    ) -> None:
        if not words:
            raise SatelliteError(
                "frontend.echo.stop_words is empty. Fix: list the words that stop a reply"
            )
        self.words = words
        self.gate = DoubleTalkGate()
        #: The margin a spotted word's window must reach (at least ``margin_db``).
        self.margin = LearntMargin(margin_db, headroom_db)
        self.ring_allowance_db = ring_allowance_db
        model_dir = pocketsphinx_model_dir(language)
        source = default_dictionary(language)
        known = dictionary_words(source)
        unknown = [w for phrase in words for w in phrase.split() if w not in known]
        if unknown:
            raise SatelliteError(
                f"frontend.echo.stop_words: {', '.join(unknown)} not in the pronunciation "
                "dictionary. Fix: use words of the language's dictionary (e.g. stop, cancel)"
            )
        self._folder = tempfile.TemporaryDirectory(prefix="pocket-stop-words-")
        folder = Path(self._folder.name)
        dictionary = grammar_dictionary(
            {w for phrase in words for w in phrase.split()}, source, folder / "words.dict"
        )
        phrases = folder / "stop.kws"
        phrases.write_text("".join(f"{p} /{threshold:g}/\n" for p in words), encoding="utf-8")
        self._decoder = _kws_decoder(model_dir, dictionary, phrases)
        self._active = False
        self._said = False
        self._spoken_over = False  # this reply is not the satellite's voice alone
        self._candidate, self._pending = "", 0  # the word spotted, frames left to judge it
        #: Words the search spotted, and of them those the gate let through.
        self.spotted = 0
        self.passed = 0
        #: The gate's measure at the last spotted word, dB.
        self.last_excess_db = float("-inf")

    @property
    def active(self) -> bool:
        """True between ``start`` and ``stop``."""
        return self._active

    def start(self) -> None:
        """A reply begins: listen for the stop words (the gate keeps its history: the
        canceller keeps what it learnt)."""
        if self._active:
            return
        self._decoder.start_utt()
        self._active, self._spoken_over = True, False
        self.margin.start_reply()

    def stop(self) -> None:
        """The reply ended (or was stopped): unless someone spoke over it, the margin
        learns what the gate measured on it."""
        self._said, self._pending = False, 0
        if self._active:
            self._decoder.end_utt()
            self._active = False
            # (spoken over: nothing was measured on it since, so nothing is learnt)
            self.margin.end_reply()

    def spoken_over(self) -> None:
        """Someone spoke over the reply (it was paused for them, or the wake word heard):
        what the gate measures on it is not the satellite's own voice, not to learn."""
        self._spoken_over = True
        self.margin.start_reply()

    def hear(
        self,
        mic: AudioChunk,
        cancelled: AudioChunk,
        playing: bool,
        measured: AudioChunk | None = None,
    ) -> StopHeard | None:
        """``process``, searching only while something ``playing`` (started and stopped
        with it); one stop word per reply."""
        if not playing:
            self.stop()
        elif not self._said:
            self.start()
        return self.process(mic, cancelled, measured)

    def process(
        self, mic: AudioChunk, cancelled: AudioChunk, measured: AudioChunk | None = None
    ) -> StopHeard | None:
        """One 10 ms frame: a ``StopHeard`` when a stop word ends in it and passes the
        double-talk gate. ``measured``: what the gate measures, when not ``cancelled``
        (the canceller's filter's output before a residual echo gate)."""
        # the echo stage hands the microphone back as it came when nothing played
        level = cancelled if measured is None else measured
        self.gate.add(mic.samples, level.samples, echo=cancelled is not mic)
        if not self._active:
            return None
        self._decoder.process_raw(cancelled.samples, False, False)
        hyp = self._decoder.hyp()
        if hyp is not None:
            self._decoder.end_utt()  # the search goes on from here, for the next word
            self._decoder.start_utt()
            self.spotted += 1
            self._candidate, self._pending = hyp.hypstr.strip(), PENDING_FRAMES
        if self._pending <= 0:
            return None
        # a word spotted early (in its middle) has more of it still to come: the gate
        # judges it again each frame for a while
        self._pending -= 1
        margin = self.margin.now_db
        excess = self.gate.excess_less_ringing_db(allowance_db=self.ring_allowance_db)
        self.last_excess_db = float("-inf") if excess is None else excess
        if excess is None:
            return None
        if not self._spoken_over:
            self.margin.measure(excess)
        if excess < margin:
            return None
        self.passed += 1
        self._said, self._pending = True, 0
        self._decoder.end_utt()  # heard: no more searching in this reply
        self._active = False
        self.margin.start_reply()  # someone spoke: not the satellite's own voice
        return StopHeard(self._candidate, round(cancelled.end_seconds, 3), round(excess, 1))

    def reset(self) -> None:
        """A new room (the canceller starts again): the gate's history and what the
        margin learnt are gone."""
        self.stop()
        self.gate.reset()
        self.margin.forget()

    def close(self) -> None:
        self.stop()
        self._folder.cleanup()


def _kws_decoder(model_dir: Path, dictionary: Path, phrases: Path) -> Any:
    try:
        from pocketsphinx import Config, Decoder  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("pocketsphinx", None, "Hearing stop words") from err
    config = Config(
        hmm=os.fspath(model_dir / "en-us"),
        dict=os.fspath(dictionary),
        kws=os.fspath(phrases),
        lm=None,
        loglevel="FATAL",
    )
    return Decoder(config)
