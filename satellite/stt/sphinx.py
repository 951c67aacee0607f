"""PocketSphinx, closed domain: a grammar search with a phone-loop second opinion.

Two decoders listen to the same frames while the person speaks. One searches the
grammar compiled from the active intents; the other a free loop of phones. A grammar
forces any speech into some command, so the grammar's own score cannot reject
out-of-domain speech; the per-frame log-likelihood ratio of the two searches can: good
commands score close to the phone loop, prose far below it.

A third decoder, the grammar with default (narrow) beams, searches an utterance again
when asked: in a loud room a device action must come out the same from the command heard
the other way, raw or denoised (``search_whole``); in a quiet room a command the
streaming search did not trust is searched from its own cepstral mean, with the phone
loop (``search_own_mean``). All three load a dictionary of the grammar's own words.
While the help question is open (``answer_searches``) the two grammar decoders search
the answers' grammar instead (stt/answer_grammar.py), a search of its own in each.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..audio.chunk import FRAME_MS, AudioChunk, join_frames
from ..errors import MissingDependencyError
from .answer_grammar import AnswerGrammar, AnswerSearches
from .base import SttResult, WordTiming, confidence
from .cepstral_mean import MeanMeter, RecentSpeech, fresh_features
from .fsg import Grammar
from .settings import SttSettings
from .steps import Steps, run_through

_LOGGER = logging.getLogger(__name__)
#: Beams wide enough for noisy input to reach the grammar's final state.
WIDE_BEAMS = {"beam": 1e-80, "wbeam": 1e-60, "pbeam": 1e-80}
_FILLERS = frozenset({"<s>", "</s>", "<sil>", "[NOISE]", "++NOISE++"})
_FRAME_SECONDS = FRAME_MS / 1000.0


def _decoder(model_dir: Path, dictionary: Path | None = None, **options: Any) -> Any:
    try:
        from pocketsphinx import Config, Decoder  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("pocketsphinx", None, "Speech recognition") from err
    config = Config(
        hmm=os.fspath(model_dir / "en-us"),
        dict=os.fspath(dictionary or model_dir / "cmudict-en-us.dict"),
        loglevel="FATAL",
        **options,
    )
    return Decoder(config)


class PocketSphinxRecognizer:
    """Streaming closed-domain recognizer with out-of-grammar rejection."""

    name = "stt"

    def __init__(
        self,
        settings: SttSettings,
        grammar: Grammar,
        grammar_path: Path,
        model_dir: Path,
        dictionary: Path | None = None,
        mllr: Path | None = None,
        answers: AnswerGrammar | None = None,
    ) -> None:
        """``dictionary``: pronunciations of the grammar's words (default: all of CMUdict,
        20 MB and 80 ms more per decoder); ``mllr``: a speaker's adaptation; ``answers``:
        the answers' grammar (``answer_searches``); each may be None."""
        self.settings = settings
        self.grammar = grammar
        common: dict[str, Any] = {"lm": None, "bestpath": False, "compallsen": True}
        common.update({"mllr": os.fspath(mllr)} if mllr is not None else {})
        fsg = os.fspath(grammar_path)
        self._grammar = _decoder(model_dir, dictionary, fsg=fsg, **common, **WIDE_BEAMS)
        self._phones = _decoder(model_dir, dictionary, **common)
        self._phones.add_allphone_file("free", None)
        self._phones.activate_search("free")
        #: The grammar with default beams: searches again, paired with the phone loop
        #: (``search_own_mean``: it scores every senone as the phone loop does, or the
        #: scores could not be compared), and alone as a second opinion (``search_whole``).
        self._again = _decoder(model_dir, dictionary, fsg=fsg, **common)
        #: Which grammar the two grammar decoders search: the commands' or the answers'.
        self.answer_searches = AnswerSearches(grammar, (self._grammar, self._again), answers)
        #: Take the cepstral mean of a search's context (see ``fresh_features``).
        self._phone_meter = MeanMeter(self._phones, grammar)
        self._again_meter = MeanMeter(self._again, grammar)
        self.recent_speech = RecentSpeech(seconds=0.0)  # off: see RecentSpeech
        #: The grammar search the phone loop is paired with now.
        self._searching = self._grammar
        self._start_seconds = 0.0
        self._frames = 0
        self._active = False
        self._context: AudioChunk | None = None
        #: Frames of this utterance, for searching again after a pause (``resume``).
        self._heard: list[AudioChunk] = []
        #: The result of a search ended at a pause (``pause``).
        self._ended: SttResult | None = None
        #: Time it took to compile and load, s (set by the factory).
        self.load_seconds = 0.0

    def start(self, timestamp_seconds: float, context: AudioChunk | None = None) -> None:
        self.reset()
        self._context = context
        self._start_seconds = timestamp_seconds
        self._begin()

    def _begin(self, aside: bool = False) -> None:
        """Start the phone loop and a grammar search: the streaming one (wide beams), or
        ``aside`` the one that searches again (default beams)."""
        grammar = self._again if aside else self._grammar
        context = self._context or self.recent_speech.audio()  # none: live CMN's mean
        fresh_features((grammar, self._phones), self._phone_meter, context, self._grammar.get_cmn())
        self._searching = grammar
        self.answer_searches.start(grammar)
        self._phones.start_utt()
        self._active = True
        self._frames = 0

    def process(self, frame: AudioChunk) -> None:
        if not self._active and self._ended is None:
            self.start(frame.timestamp_seconds)
        self._heard.append(frame)
        if self._ended is not None:
            return  # ended at a pause: kept in case the person goes on (``resume``)
        self._feed(frame)

    def _feed(self, frame: AudioChunk) -> None:
        self._searching.process_raw(frame.samples, False, False)
        self._phones.process_raw(frame.samples, False, False)
        self._frames += 1

    def pause(self) -> SttResult | None:
        """End the searches at a pause in speech and return what they heard.

        The partial hypothesis of a grammar search is the best path to *any* state, so
        it often ends in a half sentence that the final result does not: only ending
        the search tells whether a whole command was heard. If the person goes on,
        ``resume`` searches the audio again from the start.
        """
        if self._ended is None and self._active:
            self._ended = self._end()
        return self._ended

    def resume(self) -> None:
        """Speech went on after ``pause``: search again all that was heard.

        The utterance so far (about a tenth of its length on one x86 core), paid only when
        a person pauses mid-command; the frame loop does it a frame per step.
        """
        run_through(self.resume_steps())

    def resume_steps(self) -> Steps[None]:
        """``resume``, a frame searched per step."""
        if self._ended is None:
            return
        self._ended = None
        heard, self._heard = self._heard, []
        self._begin()
        yield
        for frame in heard:
            self.process(frame)
            yield

    def search_whole(
        self, frames: Sequence[AudioChunk], context: AudioChunk | None = None
    ) -> SttResult:
        """A second opinion: the grammar searched once more, over the same utterance heard
        another way, by the decoder that searches aside (the streaming searches are left
        as they are).

        Only the words count here: no phone loop and the default beams, which in noise
        cost about a quarter of the streaming search (0.6-0.9 against 2-4 ms per 10 ms
        frame on one x86 core at 10 dB SNR). The result has no score; ``in_grammar``
        says whether it is a whole sentence of the grammar.
        """
        return run_through(self.search_whole_steps(frames, context))

    def search_whole_steps(
        self, frames: Sequence[AudioChunk], context: AudioChunk | None = None
    ) -> Steps[SttResult]:
        """``search_whole``, a frame searched per step."""
        if not frames:
            return SttResult("", 0.0, in_grammar=False)
        check = self._again
        fresh_features((check,), self._again_meter, context)
        self.answer_searches.start(check)
        yield
        for frame in frames:
            check.process_raw(frame.samples, False, False)
            yield
        check.end_utt()
        text = _hyp_text(check.hyp())
        complete = bool(text) and self.answer_searches.grammar().accepts(text.split())
        return SttResult(text, 1.0 if complete else 0.0, (), complete)

    def search_own_mean(self, frames: Sequence[AudioChunk]) -> SttResult:
        """The utterance searched again, normalised by its own cepstral mean, by the
        phone loop and the grammar with default beams, and scored as streaming results
        are.

        A streaming search starts from the mean of the speech before it (the wake word)
        or, with none, from where live normalisation stands, and keeps it through the
        utterance. Far from the utterance's own, it makes commands misheard or scored
        out of the domain: of 62 clean eSpeak commands heard with no speech before them,
        40 were heard right from pocketsphinx's initial mean and 60 from their own.

        The wide beams the streaming search needs in noise gained nothing here (it is
        not asked in a loud room): the same commands heard right and the same
        out-of-domain sentences let through, after the wake word and alone, in two
        thirds of the time. Costs a search of the whole utterance (about a tenth of its
        length on one x86 core).
        """
        return run_through(self.search_own_mean_steps(frames))

    def search_own_mean_steps(
        self, frames: Sequence[AudioChunk], mean_of: Sequence[AudioChunk] | None = None
    ) -> Steps[SttResult]:
        """``search_own_mean`` a frame per step, from ``mean_of``'s mean (or ``frames``')."""
        if not frames:
            return SttResult("", 0.0, in_grammar=False)
        self.pause()  # the streaming search is left as at a pause (``finish``, ``resume``)
        streaming = self._context, self._start_seconds
        self._context = join_frames(mean_of or frames)
        self._start_seconds = frames[0].timestamp_seconds
        self._begin(aside=True)
        yield
        for frame in frames:
            self._feed(frame)
            yield
        result = self._end()
        self._searching = self._grammar
        self._context, self._start_seconds = streaming
        return result

    def finish(self) -> SttResult:
        ended = self._ended if self._ended is not None else self._end()
        self.recent_speech.add(self._heard)
        self.reset()
        return ended

    def _end(self) -> SttResult:
        if not self._active:
            return SttResult("", 0.0, in_grammar=False)
        self._searching.end_utt()
        self._phones.end_utt()
        self._active = False
        hyp = self._searching.hyp()
        text = _hyp_text(hyp)
        words = tuple(self._words())
        score = utterance_score(self._score_ratio(hyp), words, self.settings.word_weight)
        complete = bool(text) and self.answer_searches.grammar().accepts(text.split())
        in_grammar = complete and score is not None and score >= self.settings.rejection_threshold
        return SttResult(
            text,
            0.0 if score is None else confidence(score - self.settings.rejection_threshold),
            words,
            in_grammar,
            None if score is None else round(score, 3),
        )

    def reset(self) -> None:
        if self._active:
            self._searching.end_utt()
            self._phones.end_utt()
        self._searching = self._grammar
        self._active = False
        self._frames = 0
        self._ended = None
        self._heard = []

    def _score_ratio(self, hyp: Any) -> float | None:
        phones = self._phones.hyp()
        if not hyp or not phones or not self._frames:
            return None
        grammar_score = _log(self._searching, hyp.score)
        phone_score = _log(self._phones, phones.score)
        if grammar_score is None or phone_score is None:
            return None
        return (grammar_score - phone_score) / self._frames

    def _words(self) -> list[WordTiming]:
        phones = [
            (seg.start_frame, seg.end_frame, _log(self._phones, seg.ascore))
            for seg in self._phones.seg() or ()
        ]
        out = []
        for seg in self._searching.seg() or ():
            if not seg.word or seg.word in _FILLERS or seg.word.startswith(("[", "(")):
                continue
            out.append(
                WordTiming(
                    seg.word.split("(")[0],
                    round(self._start_seconds + seg.start_frame * _FRAME_SECONDS, 3),
                    round(self._start_seconds + (seg.end_frame + 1) * _FRAME_SECONDS, 3),
                    word_score(
                        seg.start_frame, seg.end_frame, _log(self._searching, seg.ascore), phones
                    ),
                )
            )
        return out


def nbest(recognizer: PocketSphinxRecognizer, limit: int = 40) -> list[tuple[str, float]]:
    """The best sentences of ``recognizer``'s streaming search over its last finished
    utterance, best first, with their lattice scores (log domain): up to ``limit``."""
    decoder = recognizer._grammar
    out = []
    for index, hyp in enumerate(decoder.nbest() or ()):
        if index >= limit:
            break
        score = _log(decoder, hyp.score)
        if hyp.hypstr and score is not None:
            out.append((hyp.hypstr.strip(), score))
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


def _hyp_text(hyp: Any) -> str:
    """The words of a decoder's best hypothesis ("" when it has none)."""
    return hyp.hypstr.strip() if hyp and hyp.hypstr else ""


def _log(decoder: Any, probability: float) -> float | None:
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


class OpenTranscriber:
    """Free-speech transcription with the full English language model.

    Too slow to stream on a Pi (about half an x86 core), so it runs once per
    out-of-domain utterance, in the fallback worker, never in the frame loop.
    """

    def __init__(self, model_dir: Path) -> None:
        self._decoder = _decoder(model_dir, lm=os.fspath(model_dir / "en-us.lm.bin"))

    def transcribe(self, audio: AudioChunk) -> str:
        """Whole-utterance decode (batch normalisation)."""
        self._decoder.start_utt()
        self._decoder.process_raw(audio.samples, False, True)
        self._decoder.end_utt()
        return _hyp_text(self._decoder.hyp())
