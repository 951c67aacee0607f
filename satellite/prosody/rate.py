"""Speech rate of an utterance: acoustic, lexical and the fused estimate.

Two sources:

* **acoustic** - syllable nuclei counted in the sound (:mod:`.acoustic`), then calibrated
  with a power law ``rate = CALIBRATION_SCALE * raw_rate ** CALIBRATION_EXPONENT``
  (articulation rate, syllables/s). The constants were fitted by
  ``bench/prosody.py --calibrate`` on a calibration set kept apart from every
  evaluation set: other sentences, other eSpeak NG voices (en+m3, en-gb-x-rp+f2, en-029,
  en-us+klatt2) plus two flite voices (kal16, rms), 100-320 wpm.
* **lexical** - recognised words with their times; syllables from CMUdict vowel phones
  (:mod:`.syllables`), duration from the first word's start to the last word's end, and
  gaps between words of 150 ms or more are pauses.

Fusion rule: trust the words when there are any and their rate is within
``max_disagreement`` (default 1.6x) of the acoustic rate; otherwise the words probably do
not match the audio (a grammar forces every input into some command), so use the
acoustic estimate. With no words, acoustic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .acoustic import MIN_PAUSE_SECONDS, AcousticAnalysis
from .syllables import SyllableDictionary, default_dictionary, is_filler

#: Power-law calibration of the acoustic articulation rate (see the module docstring).
CALIBRATION_SCALE = 0.9773
CALIBRATION_EXPONENT = 1.0301

ACOUSTIC = "acoustic"
LEXICAL = "lexical"


@dataclass(frozen=True, slots=True)
class WordTiming:
    """A recognised word and when it was said, s (as speech-to-text reports it)."""

    word: str
    start_seconds: float
    end_seconds: float


class TimedWord(Protocol):
    """Anything with a word and its times (e.g. the recogniser's own word timings)."""

    @property
    def word(self) -> str:
        """The word."""

    @property
    def start_seconds(self) -> float:
        """When it starts, s."""

    @property
    def end_seconds(self) -> float:
        """When it ends, s."""


WordsLike = Iterable[TimedWord | tuple[str, float, float]]


def as_word_timings(words: WordsLike, shift_seconds: float = 0.0) -> list[WordTiming]:
    """Accept word-timing objects or ``(word, start_seconds, end_seconds)`` tuples,
    moved ``shift_seconds`` earlier; sorted by start."""
    out = [
        WordTiming(str(w[0]), float(w[1]) - shift_seconds, float(w[2]) - shift_seconds)
        if isinstance(w, tuple)
        else WordTiming(w.word, w.start_seconds - shift_seconds, w.end_seconds - shift_seconds)
        for w in words
    ]
    for w in out:
        if not w.end_seconds >= w.start_seconds:
            raise ValueError(
                f"Word {w.word!r} ends ({w.end_seconds}) before it starts ({w.start_seconds})"
            )
    return sorted(out, key=lambda w: w.start_seconds)


@dataclass(frozen=True, slots=True)
class RateEstimate:
    """Syllables and durations of one utterance from one source."""

    source: str
    syllables: float
    speech_seconds: float
    articulation_seconds: float
    #: Share of syllables that came from the dictionary (1.0 for acoustic estimates).
    known_fraction: float = 1.0

    @property
    def speaking_rate(self) -> float | None:
        """Syllables per second over the whole utterance."""
        return self.syllables / self.speech_seconds if self.speech_seconds > 0 else None

    @property
    def articulation_rate(self) -> float | None:
        """Syllables per second with pauses of 150 ms or more left out."""
        return self.syllables / self.articulation_seconds if self.articulation_seconds > 0 else None

    def rate(self, measure: str) -> float | None:
        """``articulation`` or ``speaking`` rate."""
        return self.articulation_rate if measure == "articulation" else self.speaking_rate


def calibrate(raw_rate: float) -> float:
    """Map a raw nuclei rate to syllables/s with the fitted power law."""
    return CALIBRATION_SCALE * raw_rate**CALIBRATION_EXPONENT if raw_rate > 0 else 0.0


def acoustic_estimate(analysis: AcousticAnalysis) -> RateEstimate:
    """Calibrated estimate from nuclei; the syllable count is rate x articulation time."""
    articulation = analysis.articulation_seconds
    syllables = 0.0
    if articulation > 0 and analysis.nuclei:
        syllables = calibrate(analysis.nuclei / articulation) * articulation
    return RateEstimate(ACOUSTIC, syllables, analysis.speech_seconds, articulation)


def lexical_estimate(
    words: WordsLike,
    dictionary: SyllableDictionary | None = None,
    min_pause_seconds: float = MIN_PAUSE_SECONDS,
) -> RateEstimate | None:
    """Estimate from word timings; None when there are no real words."""
    timed = [w for w in as_word_timings(words) if not is_filler(w.word)]
    if not timed:
        return None
    book = dictionary if dictionary is not None else default_dictionary()
    syllables = known = 0
    for w in timed:
        count, in_dictionary = book.count(w.word)
        syllables += count
        known += count if in_dictionary else 0
    start = timed[0].start_seconds
    end = max(w.end_seconds for w in timed)
    pauses = 0.0
    reach = timed[0].end_seconds
    for w in timed[1:]:
        gap = w.start_seconds - reach
        if gap >= min_pause_seconds:
            pauses += gap
        reach = max(reach, w.end_seconds)
    speech = end - start
    return RateEstimate(
        LEXICAL, float(syllables), speech, speech - pauses, known / syllables if syllables else 0.0
    )


def fuse(
    acoustic: RateEstimate | None, lexical: RateEstimate | None, max_disagreement: float = 1.6
) -> RateEstimate | None:
    """Pick the estimate to trust (rule in the module docstring)."""
    if lexical is None or lexical.articulation_rate is None:
        return acoustic
    if acoustic is None or acoustic.articulation_rate is None or not acoustic.syllables:
        return lexical
    spread = abs(math.log(lexical.articulation_rate / acoustic.articulation_rate))
    return lexical if spread <= math.log(max_disagreement) else acoustic


def mean_absolute_percentage_error(estimates: Sequence[float], truths: Sequence[float]) -> float:
    """MAPE of paired estimates, as a fraction (0.1 = 10%)."""
    if len(estimates) != len(truths) or not truths:
        raise ValueError("Need equally many estimates and truths, at least one")
    return sum(abs(e / t - 1.0) for e, t in zip(estimates, truths, strict=True)) / len(truths)
