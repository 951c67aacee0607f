"""What a pocketsphinx grammar search heard, scored against the phone loop beside it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..audio.chunk import FRAME_MS
from .base import SttResult, WordTiming, confidence
from .settings import SttSettings

_FILLERS = frozenset({"<s>", "</s>", "<sil>", "[NOISE]", "++NOISE++"})
_FRAME_SECONDS = FRAME_MS / 1000.0


def heard_by(
    grammar: Any,
    phones: Any | None,
    frames: int,
    start_seconds: float,
    accepts: Callable[[list[str]], bool],
    settings: SttSettings,
) -> SttResult:
    """What the ``grammar`` decoder heard over ``frames`` frames from ``start_seconds``,
    scored against the ``phones`` loop beside it (None: not scored); ``accepts``: whether
    a sentence is whole in the grammar searched."""
    hyp = grammar.hyp()
    text = hyp_text(hyp)
    words = tuple(_words(grammar, phones, start_seconds))
    ratio = None if phones is None else _score_ratio(grammar, phones, hyp, frames)
    score = utterance_score(ratio, words, settings.word_weight)
    complete = bool(text) and accepts(text.split())
    in_grammar = complete and score is not None and score >= settings.rejection_threshold
    return SttResult(
        text,
        0.0 if score is None else confidence(score - settings.rejection_threshold),
        words,
        in_grammar,
        None if score is None else round(score, 3),
    )


def _score_ratio(grammar: Any, phones: Any, hyp: Any, frames: int) -> float | None:
    loop = phones.hyp()
    if not hyp or not loop or not frames:
        return None
    grammar_score = log_score(grammar, hyp.score)
    phone_score = log_score(phones, loop.score)
    if grammar_score is None or phone_score is None:
        return None
    return (grammar_score - phone_score) / frames


def _words(grammar: Any, phones: Any | None, start_seconds: float) -> list[WordTiming]:
    segments = () if phones is None else phones.seg() or ()
    loop = [(seg.start_frame, seg.end_frame, log_score(phones, seg.ascore)) for seg in segments]
    out = []
    for seg in grammar.seg() or ():
        if not seg.word or seg.word in _FILLERS or seg.word.startswith(("[", "(")):
            continue
        score = None
        if phones is not None:
            ascore = log_score(grammar, seg.ascore)
            score = word_score(seg.start_frame, seg.end_frame, ascore, loop)
        out.append(
            WordTiming(
                seg.word.split("(")[0],
                round(start_seconds + seg.start_frame * _FRAME_SECONDS, 3),
                round(start_seconds + (seg.end_frame + 1) * _FRAME_SECONDS, 3),
                score,
            )
        )
    return out


def utterance_score(
    ratio: float | None, words: Sequence[WordTiming], word_weight: float
) -> float | None:
    """The per-frame ratio of the whole utterance, plus ``word_weight`` times that of
    its second-worst word.

    Speech from outside the domain forced into the grammar leaves several words that
    fit far worse than the phone loop; over the whole utterance they are diluted by
    the words that fit and by the silence around them. The second-worst word, not the
    worst: one short word can fit badly in a good command.
    """
    if ratio is None:
        return None
    scores = sorted(w.score for w in words if w.score is not None)
    if not scores or not word_weight:
        return ratio
    return ratio + word_weight * scores[min(1, len(scores) - 1)]


def hyp_text(hyp: Any) -> str:
    """The words of a decoder's best hypothesis ("" when it has none)."""
    return hyp.hypstr.strip() if hyp and hyp.hypstr else ""


def whole_hearing(decoder: Any, accepts: Callable[[list[str]], bool]) -> SttResult:
    """The grammar search ``decoder`` ended and read as ``search_whole`` reads it: no
    score, in the grammar when ``accepts`` takes its words as a whole sentence."""
    decoder.end_utt()
    text = hyp_text(decoder.hyp())
    whole = bool(text) and accepts(text.split())
    return SttResult(text, 1.0 if whole else 0.0, (), whole)


def log_score(decoder: Any, probability: float) -> float | None:
    """A score the Python API hands back as ``logmath.exp(int)``, in the log domain."""
    try:
        return float(decoder.logmath.log(probability))
    except (ValueError, OverflowError):
        return None


def word_score(
    start: int, end: int, grammar: float | None, phones: Sequence[tuple[int, int, float | None]]
) -> float | None:
    """A word's acoustic score in the grammar search against the phone loop's over the
    same frames, per frame (a phone only partly inside the word counts pro rata)."""
    if grammar is None:
        return None
    loop = 0.0
    for phone_start, phone_end, score in phones:
        overlap = min(end, phone_end) - max(start, phone_start) + 1
        if overlap <= 0:
            continue
        if score is None:
            return None
        loop += score * overlap / (phone_end - phone_start + 1)
    return round((grammar - loop) / (end - start + 1), 3)
