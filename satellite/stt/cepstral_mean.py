"""Where a pocketsphinx search starts its cepstral mean normalisation from."""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..audio.chunk import AudioChunk, join_frames
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


class RecentSpeech:
    """The speech of the last utterances heard (their frames well above their own quiet),
    for a search with no wake word before it to take its mean from, instead of the mean
    live normalisation reached (see ``fresh_features``). Off by default (README, echo).

    Over a reply, an utterance the VAD opens on what the canceller left of the reply holds
    that residual and the room's noise before the person: the live mean sinks towards
    them (its energy, c0, 48 against 54 for the person alone, bench/echo_words.py with
    the Kalman gain) and the next search takes the residual for words ("for me" before a
    command). The speech alone does not sink; in a quiet room it costs commands (their
    first words lost) and lets more out-of-domain speech into the grammar.
    """

    def __init__(self, seconds: float = 1.5, above_quiet_db: float = 10.0) -> None:
        """``seconds``: at most this much speech is kept, the latest (0: none, off);
        ``above_quiet_db``: a frame is speech when this far above its utterance's quiet
        (the 20th percentile of its frames' energy)."""
        self.above_quiet_db = above_quiet_db
        self._seconds = seconds
        self._frames: collections.deque[AudioChunk] = collections.deque()
        self._held_seconds = 0.0

    def add(self, frames: Sequence[AudioChunk]) -> None:
        """An utterance heard: keep its speech frames."""
        if len(frames) < 2 or self._seconds <= 0:
            return
        energy_db = np.array([_energy_db(frame) for frame in frames])
        loud = energy_db > float(np.percentile(energy_db, 20)) + self.above_quiet_db
        for frame, speech in zip(frames, loud, strict=True):
            if speech:
                self._frames.append(frame)
                self._held_seconds += frame.seconds
        while self._frames and self._held_seconds - self._frames[0].seconds >= self._seconds:
            self._held_seconds -= self._frames.popleft().seconds

    def audio(self) -> AudioChunk | None:
        """The speech kept, as one chunk (None before any)."""
        return join_frames(list(self._frames)) if self._frames else None

    def clear(self) -> None:
        self._frames.clear()
        self._held_seconds = 0.0


def _energy_db(frame: AudioChunk) -> float:
    samples = np.frombuffer(frame.samples, dtype="<i2").astype(np.float64)
    return 10.0 * float(np.log10(float(np.mean(np.square(samples))) + 1.0))


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
