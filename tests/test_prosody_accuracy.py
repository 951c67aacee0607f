"""Speech-rate accuracy on 240 eSpeak NG utterances the calibration never saw.

Truth is eSpeak's own phoneme count over the clean audio's durations
(tests/test_prosody_corpus.py); the audio carries 0.5 s of lead silence and white noise
30 dB down, like an utterance out of the recorder.
"""

from __future__ import annotations

import numpy as np
import pytest

from satellite.prosody.monitor import Measurement, measure
from satellite.prosody.rate import ACOUSTIC, LEXICAL, mean_absolute_percentage_error
from satellite.prosody.settings import ProsodySettings
from tests.synth import add_noise, have_espeak, to_chunk
from tests.test_prosody_corpus import Sample, evaluation_set, measure_sample

pytestmark = pytest.mark.skipif(not have_espeak(), reason="espeak-ng is not installed")

Results = list[tuple[Sample, Measurement]]


@pytest.fixture(scope="module")
def samples() -> tuple[Sample, ...]:
    return evaluation_set()


@pytest.fixture(scope="module")
def acoustic(samples: tuple[Sample, ...]) -> Results:
    return [(s, measure_sample(s)) for s in samples]


@pytest.fixture(scope="module")
def fused(samples: tuple[Sample, ...]) -> Results:
    return [(s, measure_sample(s, use_words=True)) for s in samples]


def _mape(results: Results, measure: str) -> float:
    estimates, truths = [], []
    for sample, m in results:
        assert m.estimate is not None
        rate = m.estimate.rate(measure)
        assert rate is not None
        estimates.append(rate)
        truths.append(
            sample.articulation_rate if measure == "articulation" else sample.speaking_rate
        )
    return mean_absolute_percentage_error(estimates, truths)


def test_the_evaluation_set_is_as_specified(samples: tuple[Sample, ...]) -> None:
    assert len(samples) >= 200
    assert len({s.voice for s in samples}) >= 3
    wpm = [s.rate_wpm for s in samples]
    assert min(wpm) == 100
    assert max(wpm) == 320
    rates = np.array([s.articulation_rate for s in samples])
    assert rates.max() / rates.min() > 2.5  # a wide range of true syllable rates


def test_utterances_with_enough_syllables_are_judged(acoustic: Results, fused: Results) -> None:
    for results in (acoustic, fused):
        missed = [(s.text, m.detail) for s, m in results if s.syllables >= 8 and not m.judged]
        assert not missed


@pytest.mark.parametrize("measure", ["articulation", "speaking"])
def test_acoustic_estimate_is_within_20_percent(acoustic: Results, measure: str) -> None:
    assert all(m.estimate is not None and m.estimate.source == ACOUSTIC for _, m in acoustic)
    assert _mape(acoustic, measure) <= 0.20


@pytest.mark.parametrize("measure", ["articulation", "speaking"])
def test_fused_estimate_is_within_12_percent(fused: Results, measure: str) -> None:
    sources = [m.estimate.source for _, m in fused if m.estimate is not None]
    assert sources.count(LEXICAL) >= 0.9 * len(fused)
    assert _mape(fused, measure) <= 0.12


def test_acoustic_error_is_even_across_the_rate_range(acoustic: Results) -> None:
    truth = np.array([s.articulation_rate for s, _ in acoustic])
    error = np.array(
        [
            m.estimate.articulation_rate / s.articulation_rate - 1
            for s, m in acoustic
            if m.estimate and m.estimate.articulation_rate
        ]
    )
    for low, high in ((0, 4.5), (4.5, 6.5), (6.5, 99)):
        chosen = (truth >= low) & (truth < high)
        assert chosen.sum() >= 30
        assert abs(float(np.median(error[chosen]))) <= 0.15  # no bias that grows with rate


def test_word_syllables_match_the_spoken_ones(fused: Results) -> None:
    """CMUdict counts of the words vs eSpeak's own phonemes: nearly always equal."""
    off = [
        abs(m.estimate.syllables - s.syllables) / s.syllables
        for s, m in fused
        if m.estimate is not None and m.estimate.source == LEXICAL
    ]
    assert float(np.mean(off)) <= 0.05


def test_misrecognised_words_fall_back_to_the_acoustic_estimate(
    samples: tuple[Sample, ...],
) -> None:
    """A grammar that forces speech into a short command must not set the rate."""
    chosen = [s for s in samples if s.syllables >= 10][:40]
    estimates, truths = [], []
    for s in chosen:
        wrong = (("what", s.words[0][1], s.words[0][2]), ("time", s.words[1][1], s.words[-1][2]))
        m = measure(to_chunk(s.audio), ProsodySettings(), words=wrong)
        assert m.estimate is not None
        assert m.estimate.source == ACOUSTIC
        estimates.append(m.estimate.articulation_rate or 0.0)
        truths.append(s.articulation_rate)
    assert mean_absolute_percentage_error(estimates, truths) <= 0.20


def test_acoustic_estimate_holds_in_noise(samples: tuple[Sample, ...]) -> None:
    """White noise 15 dB below the speech (on top of the 30 dB already there)."""
    chosen = samples[::4]
    estimates, truths = [], []
    for i, s in enumerate(chosen):
        noisy = add_noise(s.audio, 15.0, seed=i)
        m = measure(to_chunk(noisy), ProsodySettings())
        assert m.estimate is not None
        estimates.append(m.estimate.articulation_rate or 0.0)
        truths.append(s.articulation_rate)
    assert mean_absolute_percentage_error(estimates, truths) <= 0.20
