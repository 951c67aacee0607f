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
loop (``search_own_mean``; ``search_beside_steps``: the same with a fourth decoder, a
phone loop of its own, so the streaming search goes on meanwhile). With
``stt.agree_below_db`` one more, the grammar with default beams, hears a noisy room's
utterance denoised while the person speaks (other_way_stream.py). All of them load a
dictionary of the grammar's own words; scores are worked out in sphinx_scores.py.
While the help question is open (``answer_searches``) the two grammar decoders search
the answers' grammar instead (stt/answer_grammar.py), a search of its own in each.
With ``stt.loud_adaptation`` a loud room's streaming search and its phone loop are a
second pair, the acoustic model adapted to speech in noise (stt/sphinx_decoders.py,
``hear_room``); the searches again keep the first model.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..audio.chunk import AudioChunk, join_frames
from .answer_grammar import AnswerGrammar, AnswerSearches
from .base import SttResult
from .cepstral_mean import RecentSpeech, fresh_features
from .fsg import Grammar
from .other_way_stream import OtherWayStream
from .settings import SttSettings
from .sphinx_decoders import Aside, Streaming, decoder
from .sphinx_scores import heard_by, hyp_text, log_score, whole_hearing
from .steps import Steps, run_through

_LOGGER = logging.getLogger(__name__)


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
        loud_mllr: Path | None = None,
    ) -> None:
        """``dictionary``: the grammar's words' pronunciations (default: all of CMUdict, 20 MB
        and 80 ms more per decoder); ``mllr``: a speaker's adaptation; ``answers``: the
        answers' grammar; ``loud_mllr``: a loud room's adaptation; each may be None."""
        self.settings = settings
        self.grammar = grammar
        where = (model_dir, dictionary, grammar, grammar_path)
        self._quiet = Streaming.load(*where, mllr)
        #: Searches again and aside, always with the first model (see sphinx_decoders.py).
        self._aside = Aside.load(*where, mllr)
        self._loud = None if loud_mllr is None else Streaming.load(*where, loud_mllr)
        #: Whether a loud room is heard with the model adapted to speech in noise.
        self.adapted_to_loud = self._loud is not None
        self._stream = self._quiet  # the streaming pair searched now (``hear_room``)
        loud = [self._loud.grammar] if self._loud is not None else []
        #: Which grammar the grammar decoders search: the commands' or the answers'.
        self.answer_searches = AnswerSearches(
            grammar, (self._quiet.grammar, self._aside.again, *loud), answers
        )
        self.other_way = OtherWayStream.load(settings, *where, mllr)  # (a noisy room's)
        self.recent_speech = RecentSpeech(seconds=0.0)  # off: see RecentSpeech
        #: The grammar search and the phone loop searching now.
        self._searching, self._listening = self._quiet.grammar, self._quiet.phones
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

    def hear_room(self, loud: bool) -> None:
        """Search from the next utterance on with the set for a ``loud`` room or a quiet
        one (one set only without ``loud_mllr``). The live cepstral mean goes along: it
        is the features', whichever model scores them."""
        chosen = self._loud if loud and self._loud is not None else self._quiet
        if chosen is self._stream:
            return
        self.reset()
        chosen.grammar.set_cmn(self._stream.grammar.get_cmn())
        self._stream = chosen
        self._searching, self._listening = chosen.grammar, chosen.phones

    def start(self, timestamp_seconds: float, context: AudioChunk | None = None) -> None:
        self.reset()
        self._context = context
        self._start_seconds = timestamp_seconds
        self._begin()

    def _begin(self, aside: bool = False) -> None:
        """Start the phone loop and a grammar search: the streaming one (wide beams), or
        ``aside`` the one that searches again (default beams)."""
        pair = self._quiet if aside else self._stream  # the aside's model is the first's
        grammar = self._aside.again if aside else pair.grammar
        context = self._context or self.recent_speech.audio()  # none: live CMN's mean
        live = self._stream.grammar.get_cmn()
        fresh_features((grammar, pair.phones), pair.meter, context, live)
        self._searching, self._listening = grammar, pair.phones
        self.answer_searches.start(grammar)
        pair.phones.start_utt()
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
        self._listening.process_raw(frame.samples, False, False)
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
        check = self._aside.again
        fresh_features((check,), self._aside.again_meter, context)
        self.answer_searches.start(check)
        yield
        for frame in frames:
            check.process_raw(frame.samples, False, False)
            yield
        return whole_hearing(check, self.answer_searches.grammar().accepts)

    def search_own_mean(self, frames: Sequence[AudioChunk]) -> SttResult:
        """The utterance searched again, normalised by its own cepstral mean, by the
        phone loop and the grammar with default beams, and scored as streaming results
        are.

        A streaming search starts from the mean of the speech before it (the wake word)
        or, with none, from where live normalisation stands, and keeps it through the
        utterance. Far from the utterance's own, it makes commands misheard or scored
        out of the domain: of 62 clean eSpeak commands heard with no speech before them,
        40 were heard right from pocketsphinx's initial mean and 60 from their own.

        Wide beams gained nothing here (not asked in a loud room): the same results in
        two thirds of the time. Costs a tenth of the utterance's length (one x86 core).
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
        self._searching, self._listening = self._stream.grammar, self._stream.phones
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
        self._listening.end_utt()
        self._active = False
        return self._heard_by(self._searching, self._listening, self._frames, self._start_seconds)

    def _heard_by(self, grammar: Any, phones: Any | None, frames: int, start: float) -> SttResult:
        accepts = self.answer_searches.grammar().accepts
        return heard_by(grammar, phones, frames, start, accepts, self.settings)

    def partial(self) -> SttResult | None:
        """What the streaming search has heard so far, the search going on: its best
        sentence and word timings, not scored (None: not searching, or ended at a pause)."""
        if not self._active or self._ended is not None:
            return None
        return self._heard_by(self._searching, None, self._frames, self._start_seconds)

    def search_beside_steps(
        self, frames: Sequence[AudioChunk], mean_of: Sequence[AudioChunk] | None = None
    ) -> Steps[SttResult]:
        """``search_own_mean_steps`` with the streaming search left going on (the search
        aside has a phone loop of its own): the same result."""
        if not frames:
            return SttResult("", 0.0, in_grammar=False)
        again, phones = self._aside.again, self._aside.beside_phones
        fresh_features((again, phones), self._aside.beside_meter, join_frames(mean_of or frames))
        self.answer_searches.start(again)
        phones.start_utt()
        try:  # (closed before its end: the searches are ended all the same)
            yield
            for frame in frames:
                again.process_raw(frame.samples, False, False)
                phones.process_raw(frame.samples, False, False)
                yield
        finally:
            again.end_utt()
            phones.end_utt()
        return self._heard_by(again, phones, len(frames), frames[0].timestamp_seconds)

    def reset(self) -> None:
        if self._active:
            self._searching.end_utt()
            self._listening.end_utt()
        self._searching, self._listening = self._stream.grammar, self._stream.phones
        self._active = False
        self._frames = 0
        self._ended = None
        self._heard = []


def nbest(recognizer: PocketSphinxRecognizer, limit: int = 40) -> list[tuple[str, float]]:
    """The best sentences of ``recognizer``'s streaming search over its last finished
    utterance, best first, with their lattice scores (log domain): up to ``limit``."""
    decoder = recognizer._stream.grammar
    out = []
    for index, hyp in enumerate(decoder.nbest() or ()):
        if index >= limit:
            break
        score = log_score(decoder, hyp.score)
        if hyp.hypstr and score is not None:
            out.append((hyp.hypstr.strip(), score))
    return out


class OpenTranscriber:
    """Free-speech transcription with the full English language model.

    Too slow to stream on a Pi (about half an x86 core), so it runs once per
    out-of-domain utterance, in the fallback worker, never in the frame loop.
    """

    def __init__(self, model_dir: Path) -> None:
        self._decoder = decoder(model_dir, lm=os.fspath(model_dir / "en-us.lm.bin"))

    def transcribe(self, audio: AudioChunk) -> str:
        """Whole-utterance decode (batch normalisation)."""
        self._decoder.start_utt()
        self._decoder.process_raw(audio.samples, False, True)
        self._decoder.end_utt()
        return hyp_text(self._decoder.hyp())
