"""A noisy room's second hearing, searched while the person speaks.

In a room not loud but noisy (``HearingSession.noisy``, ``stt.agree_below_db``) what is
heard must come out the same heard the other way, denoised (nlu/trust.py
``must_agree``). Searched after the pause that ends the utterance, that hearing held the
answer back 0.4-0.8 s on one x86 core (the frame loop gives a search aside three frames
of audio per 10 ms frame) and would hold it longer on a Pi. So when the room sounds noisy
as the utterance starts, the denoised frames are searched as they come, beside the
streaming search, by a decoder of their own (the grammar with default beams, the same as
``search_whole``'s): at the pause the hearing is there, ended in one step. It costs
that search per frame while the person speaks (about a quarter of the streaming
search) and a decoder's memory; with ``agree_below_db`` 0 it is not loaded. A person who
goes on after a pause has it searched again, as the streaming search is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..audio.chunk import AudioChunk
from .base import SttResult
from .cepstral_mean import MeanMeter, fresh_features
from .fsg import Grammar
from .sphinx_decoders import grammar_decoder
from .sphinx_scores import whole_hearing
from .steps import Steps

if TYPE_CHECKING:
    from .settings import SttSettings


class OtherWayStream:
    """``decoder`` (the commands' grammar, default beams) searching the utterance heard
    the other way as it comes; ``accepts`` tells a whole sentence of the grammar."""

    def __init__(
        self, decoder: Any, meter: MeanMeter, accepts: Callable[[list[str]], bool]
    ) -> None:
        self._decoder = decoder
        self._meter = meter
        self._accepts = accepts
        #: The commands' search (the decoder's own).
        self._search = decoder.current_search()
        self._active = False
        #: What it heard, once ended.
        self._heard: SttResult | None = None
        #: What it started after, and the frames it was fed (searched again on resume).
        self._context: AudioChunk | None = None
        self._fed: list[AudioChunk] = []

    @classmethod
    def load(
        cls,
        settings: SttSettings,
        model_dir: Path,
        dictionary: Path | None,
        grammar: Grammar,
        grammar_path: Path,
        mllr: Path | None,
    ) -> OtherWayStream | None:
        """The stream for ``grammar`` (compiled at ``grammar_path``), the model adapted by
        ``mllr`` as the searches again have it; None when ``stt.agree_below_db`` is 0."""
        if settings.agree_below_db <= 0:
            return None
        found = grammar_decoder(model_dir, dictionary, grammar_path, mllr)
        return cls(found, MeanMeter(found, grammar), grammar.accepts)

    def start(self, context: AudioChunk | None) -> None:
        """Start afresh after ``context`` (the wake word heard the same way; None: none)."""
        self.stop()
        self._context = context
        self._begin()

    def _begin(self) -> None:
        fresh_features((self._decoder,), self._meter, self._context)
        self._decoder.activate_search(self._search)
        self._decoder.start_utt()
        self._active = True

    def process(self, frame: AudioChunk) -> None:
        """Search the next frame (not started: nothing; ended at a pause: kept in case
        the person goes on, ``resume_steps``)."""
        if not self._active:
            return
        self._fed.append(frame)
        if self._heard is None:
            self._decoder.process_raw(frame.samples, False, False)

    def resume_steps(self) -> Steps[None]:
        """The person went on after a pause where it was ended (``heard``): search again
        all it was fed, those since the pause too, a frame per step, and go on from there
        (as the streaming search does, ``PocketSphinxRecognizer.resume``)."""
        if not self._active or self._heard is None:
            return
        self._heard = None
        fed, self._fed = self._fed, []
        self._begin()
        yield
        for frame in fed:
            self.process(frame)
            yield

    def heard(self) -> SttResult | None:
        """What it heard over the frames so far, ended there (None: not searching). The
        result is a ``search_whole``'s: no score; in the grammar if a whole sentence."""
        if not self._active:
            return None
        if self._heard is None:
            self._heard = whole_hearing(self._decoder, self._accepts)
        return self._heard

    def stop(self) -> None:
        """Drop the utterance searched, if any."""
        if self._active and self._heard is None:
            self._decoder.end_utt()
        self._active = False
        self._heard = None
        self._fed = []
