"""Where a pocketsphinx search starts its cepstral mean normalisation from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..audio.chunk import AudioChunk
from .fsg import Grammar

#: The name of the one-word search that takes a mean.
_MEAN_SEARCH = "mean"


class MeanMeter:
    """Takes the cepstral mean of some audio on ``decoder``, with a search of one word of
    ``grammar`` instead of its own.

    Audio fed features-only is still searched when the utterance ends, so taking a mean
    costs a search of the audio: with the phone loop, 60-120 ms for a 1.5 s context and
    as much as the utterance's own search for its own mean, in one piece in the frame
    loop. The mean is the features', the same whichever search runs; a search of one
    word costs a sixth or less. The decoder is left as its own search would leave it
    (the same results after, checked on the demo's sessions).
    """

    def __init__(self, decoder: Any, grammar: Grammar) -> None:
        self.decoder = decoder
        self._search: str | None = None
        words = sorted({word for _, _, word in grammar.arcs if word and word.isalpha()})
        if words:
            self._search = decoder.current_search()
            grammar_text = f"#JSGF V1.0; grammar mean; public <mean> = {words[0]};"
            decoder.add_jsgf_string(_MEAN_SEARCH, grammar_text)
            decoder.activate_search(self._search)

    def mean(self, audio: AudioChunk) -> str:
        """The whole-utterance cepstral mean of ``audio`` (features fed afresh)."""
        decoder = self.decoder
        if self._search is not None:
            decoder.activate_search(_MEAN_SEARCH)
        try:
            decoder.start_utt()
            decoder.process_raw(audio.samples, True, True)
            decoder.end_utt()
            return str(decoder.get_cmn())
        finally:
            if self._search is not None:
                decoder.activate_search(self._search)


def fresh_features(
    decoders: Sequence[Any],
    meter: MeanMeter,
    context: AudioChunk | None,
    live_mean: str | None = None,
) -> None:
    """Start the decoders' feature extraction afresh, from the cepstral mean of the speech
    just before the command (the wake word), else from ``live_mean`` if given.

    Feature state outlives an utterance: a search that follows one of other audio
    (denoised after raw, or the other way round) heard clean commands as others ("turn
    on the kitchen light" as "what of the fans are my off"), and even after commands
    heard the same way the scores drift. Every search starts as a new decoder would.
    Live normalisation starts cold and adapts over several utterances; in noise the first
    commands came out empty or wrong: the context's whole-utterance mean (features only)
    is where a search starts (taken by ``meter``, on one of ``decoders``).
    """
    for decoder in decoders:
        decoder.reinit_feat()
    mean = live_mean
    if context is not None and context.num_frames:
        mean = meter.mean(context)
    if mean is not None:
        for decoder in decoders:
            decoder.set_cmn(mean)
