"""A second opinion on a wake word detection the model was not sure of.

The wake word model fires when its probability passes its cutoff (0.85 for
``okay_nabu``); in loud rooms the wake word often peaks below that. A peak in the band
``[frontend.wake.checked_above, cutoff)`` is taken only when PocketSphinx, over the
audio the wake word heard up to it, also hears "okay nabu" (``PhraseCheck``). Detections
at or above the cutoff are taken as before, unchecked.

The check has two parts, both PocketSphinx over the same window, and the phrase must
pass both (``BothCheck``):

1. the keyphrase search (``kws``) for the phrase, found or not at a threshold against
   its phone-loop garbage model (``KeyphraseCheck``);
2. only where it was found: the phrase as a grammar against a free phone loop, the
   per-frame log-likelihood ratio over the phrase's words (as the commands'
   out-of-domain check scores words), at least a margin (``PhraseScoreCheck``).

The score alone passes ordinary speech in white noise; it is there to catch the
keyphrase search's own mistakes (measured in ``bench/wake_band.py``; the README's wake
word section has the figures). Every search starts its features afresh, so a check
does not depend on the ones before it.

``BandCheck`` holds the audio, follows a band detection to its peak, and runs the check
a step at a time (``STEP_FRAMES`` of audio per 10 ms frame): PocketSphinx holds the GIL,
so it cannot run beside the frame loop, and a whole window at once would hold the loop
up for tens of milliseconds.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import MissingDependencyError
from ..stt.lexicon import pocketsphinx_model_dir
from .base import WakeHit

#: How the check says the wake phrase ("nabu" is not in CMUdict).
PRONUNCIATIONS = "okay OW K EY\nnabu N AA B UW\nnabu(2) N AE B UW\n"
PHRASE = "okay nabu"
#: The models whose phrase the check knows.
CHECKED_MODELS = frozenset({"okay_nabu"})
#: Audio the check hears, ending where the band detection was decided, s.
WINDOW_SECONDS = 2.0
#: 10 ms frames of the window searched per frame of the loop.
STEP_FRAMES = 10
FRAME_BYTES = 320
#: The band's floor while the wake word's expander turns a room of other voices down
#: (frontend/expander.py). Turned down there, reading with no wake word in it rose into
#: the band: 10 h of it in babble 10 dB below gave 3 band detections that the check
#: confirmed (peaks 0.20-0.30; none with the expander off). On 96 scenes a room
#: (bench/wake_expander.py), % woken with the expander at this floor stayed above the
#: expander off at 0.2: babble 10 dB 33 against 25, TV 49 against 45, people 34 against
#: 28, babble 20 dB 84 against 85. At this floor 10 h of reading in each of babble, TV
#: and people rooms gave one false wake (people: a band detection at 0.52; none there
#: with the expander off); 0.55 would keep less of the gain (README, "The wake word").
EXPANDED_CHECKED_ABOVE = 0.35
#: Band detections ``BandCheck.checked`` keeps (the latest).
CHECKED_KEPT = 1000
#: The keyphrase search's threshold (a likelihood against its phone loop; lower hears
#: more).
KEYPHRASE_THRESHOLD = 1e-60
#: The phrase score's margin: its per-frame log-likelihood ratio against a free phone
#: loop must be at least this.
SCORE_MARGIN = -50.0
#: Beams wide enough for noisy input to reach the grammar's final state.
WIDE_BEAMS = {"beam": 1e-80, "wbeam": 1e-60, "pbeam": 1e-80}


class PhraseCheck(Protocol):
    """Whether 16 kHz 16-bit mono audio holds the wake phrase."""

    def search(self, pcm: bytes) -> Generator[None, None, float | None]:
        """The check's score of ``pcm``, fed ``STEP_FRAMES`` frames per step (None: the
        phrase was not found at all)."""

    def confirms(self, score: float | None) -> bool:
        """Whether ``score`` confirms the phrase."""


def wake_decoder(folder: Path, **options: Any) -> Any:
    """A PocketSphinx decoder (en-us) that knows the phrase's words, with ``options``;
    its dictionary is written to ``folder``."""
    try:
        from pocketsphinx import Config, Decoder  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("pocketsphinx", None, "The wake word check") from err
    words = folder / "wake.dict"
    if not words.is_file():
        words.write_text(PRONUNCIATIONS, encoding="utf-8")
    model = pocketsphinx_model_dir("en") / "en-us"
    config = Config(hmm=os.fspath(model), dict=os.fspath(words), loglevel="FATAL", **options)
    return Decoder(config)


def window_chunks(pcm: bytes) -> list[bytes]:
    """``pcm`` in pieces of ``STEP_FRAMES`` frames: what a check searches per step."""
    step = STEP_FRAMES * FRAME_BYTES
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]


def _log(decoder: Any, probability: float) -> float | None:
    """A score the Python API hands back as ``logmath.exp(int)``, in the log domain."""
    try:
        return float(decoder.logmath.log(probability))
    except (ValueError, OverflowError):
        return None


class KeyphraseCheck:
    """PocketSphinx's keyphrase search for the phrase: found at ``threshold`` or not."""

    def __init__(self, threshold: float = KEYPHRASE_THRESHOLD) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="pocket-wake-check-")
        folder = Path(self._folder.name)
        phrases = folder / "wake.kws"
        phrases.write_text(f"{PHRASE} /{threshold:g}/\n", encoding="utf-8")
        self._decoder = wake_decoder(folder, kws=os.fspath(phrases), lm=None)

    def search(self, pcm: bytes) -> Generator[None, None, float | None]:
        decoder = self._decoder
        decoder.reinit_feat()  # every check starts as a new decoder would
        decoder.start_utt()
        found = False
        try:
            for chunk in window_chunks(pcm):
                decoder.process_raw(chunk, False, False)
                found = found or decoder.hyp() is not None
                yield
        finally:
            decoder.end_utt()
        return 1.0 if found or decoder.hyp() is not None else None

    def confirms(self, score: float | None) -> bool:
        return score is not None


class PhraseScoreCheck:
    """The phrase as a grammar against a free phone loop: the per-frame log-likelihood
    ratio over the frames of the phrase's words, at least ``margin``."""

    def __init__(self, margin: float = SCORE_MARGIN) -> None:
        self.margin = margin
        #: Frames the phrase took in the last search.
        self.span_frames = 0
        self._folder = tempfile.TemporaryDirectory(prefix="pocket-wake-check-")
        folder = Path(self._folder.name)
        grammar = folder / "wake.gram"
        grammar.write_text(
            f"#JSGF V1.0;\ngrammar wake;\npublic <wake> = {PHRASE};\n", encoding="utf-8"
        )
        common: dict[str, Any] = {"lm": None, "bestpath": False, "compallsen": True}
        self._grammar = wake_decoder(folder, jsgf=os.fspath(grammar), **common, **WIDE_BEAMS)
        self._phones = wake_decoder(folder, **common)
        self._phones.add_allphone_file("free", None)
        self._phones.activate_search("free")

    def search(self, pcm: bytes) -> Generator[None, None, float | None]:
        grammar, phones = self._grammar, self._phones
        grammar.reinit_feat()  # every check starts as a new decoder would
        phones.reinit_feat()
        grammar.start_utt()
        phones.start_utt()
        try:
            for chunk in window_chunks(pcm):
                grammar.process_raw(chunk, False, False)
                phones.process_raw(chunk, False, False)
                yield
        finally:
            grammar.end_utt()
            phones.end_utt()
        return self._score()

    def _score(self) -> float | None:
        words = [
            (seg.start_frame, seg.end_frame, _log(self._grammar, seg.ascore))
            for seg in self._grammar.seg() or ()
            if seg.word and seg.word.split("(")[0] in PHRASE.split()
        ]
        if len(words) != len(PHRASE.split()) or any(w[2] is None for w in words):
            return None
        start, end = int(words[0][0]), int(words[-1][1])
        self.span_frames = end - start + 1
        loop = 0.0
        for seg in self._phones.seg() or ():
            overlap = min(end, seg.end_frame) - max(start, seg.start_frame) + 1
            score = _log(self._phones, seg.ascore)
            if overlap <= 0:
                continue
            if score is None:
                return None
            loop += score * overlap / (seg.end_frame - seg.start_frame + 1)
        phrase = sum(float(w[2] or 0.0) for w in words)
        return float(phrase - loop) / (end - start + 1)

    def confirms(self, score: float | None) -> bool:
        return score is not None and score >= self.margin


class BothCheck:
    """``first``, then, only where it confirms the phrase, ``second``: the phrase must
    pass both (the second's score is the result)."""

    def __init__(self, first: PhraseCheck, second: PhraseCheck) -> None:
        self.first = first
        self.second = second

    def search(self, pcm: bytes) -> Generator[None, None, float | None]:
        if not self.first.confirms((yield from self.first.search(pcm))):
            return None
        return (yield from self.second.search(pcm))

    def confirms(self, score: float | None) -> bool:
        return self.second.confirms(score)


@dataclass(slots=True)
class _Candidate:
    """A detection in the band, followed to its peak."""

    hit: WakeHit
    #: The check running over the audio up to the peak (None: still rising).
    search: Generator[None, None, float | None] | None = None


class BandCheck:
    """Detections in ``[checked_above, cutoff)``, each taken only when ``check`` confirms
    the phrase in the audio up to it.

    Feed every frame's audio to ``hear`` and every model decision to ``observe``;
    ``advance`` once a frame runs the check a step and gives the hit it confirms.
    """

    def __init__(
        self, check: PhraseCheck, checked_above: float, raised_above: float | None = None
    ) -> None:
        self.check = check
        self.checked_above = checked_above
        #: The floor while ``raised`` (the wake word's expander turns a room of other
        #: voices down: frontend/expander.py), if higher.
        self.raised_above = max(checked_above, raised_above or 0.0)
        self.raised = False
        self._audio: deque[bytes] = deque(maxlen=round(WINDOW_SECONDS * 100))
        self._candidate: _Candidate | None = None
        #: Per model, the peak of its band detection last rejected: a new one must rise
        #: above it, until the model falls below the band again.
        self._spent: dict[str, float] = {}
        #: The last band detections checked (at their peaks) and their scores.
        self.checked: deque[tuple[WakeHit, float | None]] = deque(maxlen=CHECKED_KEPT)

    @property
    def busy(self) -> bool:
        """Whether a band detection is being followed or checked."""
        return self._candidate is not None

    def hear(self, samples: bytes) -> None:
        """One 10 ms frame of what the wake word hears."""
        self._audio.append(samples)

    def observe(self, hit: WakeHit) -> None:
        """A model's decision below its cutoff (``hit.probability``) at ``hit``'s time."""
        candidate = self._candidate
        if hit.probability <= (self.raised_above if self.raised else self.checked_above):
            self._spent.pop(hit.model, None)
            if candidate is not None and candidate.hit.model == hit.model:
                self._begin(candidate)
            return
        if hit.probability <= self._spent.get(hit.model, 0.0) or hit.model not in CHECKED_MODELS:
            return
        if candidate is None:
            self._candidate = _Candidate(hit)
        elif candidate.hit.model == hit.model and candidate.search is None:
            if hit.probability > candidate.hit.probability:
                candidate.hit = hit
            elif hit.probability < candidate.hit.probability:
                self._begin(candidate)  # past its peak (a model repeats its last decision)

    def _begin(self, candidate: _Candidate) -> None:
        if candidate.search is None:
            candidate.search = self.check.search(b"".join(self._audio))

    def advance(self) -> WakeHit | None:
        """A step of the check in progress: the band detection once it is confirmed."""
        candidate = self._candidate
        if candidate is None or candidate.search is None:
            return None
        try:
            next(candidate.search)
        except StopIteration as done:
            score: float | None = done.value
            self.checked.append((candidate.hit, score))
            self._candidate = None
            if self.check.confirms(score):
                return WakeHit(
                    model=candidate.hit.model,
                    wake_word=candidate.hit.wake_word,
                    probability=candidate.hit.probability,
                    timestamp_seconds=candidate.hit.timestamp_seconds,
                    checked=True,
                )
            self._spent[candidate.hit.model] = candidate.hit.probability
        return None

    def clear(self) -> None:
        """A detection was taken (or all is forgotten): drop the band detection."""
        if self._candidate is not None and self._candidate.search is not None:
            self._candidate.search.close()
        self._candidate = None
        self._spent.clear()

    def reset(self) -> None:
        self.clear()
        self._audio.clear()
        self.raised = False


def make_band_check(checked_above: float | None, models: tuple[str, ...]) -> BandCheck | None:
    """The band check ``frontend.wake.checked_above`` asks for (None: off, or no model
    listened for whose phrase the check knows)."""
    if not checked_above or not CHECKED_MODELS.intersection(models):
        return None
    check = BothCheck(KeyphraseCheck(), PhraseScoreCheck())
    return BandCheck(check, checked_above, EXPANDED_CHECKED_ABOVE)
