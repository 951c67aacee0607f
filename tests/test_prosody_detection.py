"""Rushed-speech alerts over a simulated day per speaker, with the default settings.

Each of four eSpeak NG speakers (voices the calibration never saw) has a normal rate;
the day is 20 warm-up utterances, then blocks of 12-18 normal utterances at 1.0-1.15x
each followed by a rushed episode of 3-5 utterances at 1.5-2.0x (true articulation-rate
ratios, measured from the audio). Alerts must catch >= 95% of the episodes and raise at
most one false alert per 200 normal utterances.
"""

from __future__ import annotations

import pytest

from tests.synth import have_espeak
from tests.test_prosody_corpus import (
    EVALUATION_VOICES,
    DayResult,
    DayUtterance,
    run_day,
    simulate_day,
)

pytestmark = pytest.mark.skipif(not have_espeak(), reason="espeak-ng is not installed")

#: Each speaker's normal articulation rate, syllables/s (older adults: ~4-5).
NORMAL_RATES = (4.2, 4.6, 5.0, 4.4)


@pytest.fixture(scope="module")
def days() -> list[list[DayUtterance]]:
    return [
        simulate_day(voice, pitch, rate, seed=k + 1)
        for k, ((voice, pitch), rate) in enumerate(
            zip(EVALUATION_VOICES, NORMAL_RATES, strict=True)
        )
    ]


def _check(results: list[DayResult]) -> None:
    episodes = sum(r.episodes for r in results)
    detected = sum(r.detected for r in results)
    false_alerts = sum(r.false_alerts for r in results)
    normal = sum(r.normal_utterances for r in results)
    assert episodes >= 20
    assert normal >= 300
    assert detected >= 0.95 * episodes, f"{detected} of {episodes} episodes detected"
    assert false_alerts <= normal / 200, f"{false_alerts} false alerts in {normal} utterances"


def test_the_simulated_days_are_as_specified(days: list[list[DayUtterance]]) -> None:
    for day in days:
        normal = [u.true_ratio for u in day if u.episode is None and not u.warmup]
        rushed = [u.true_ratio for u in day if u.episode is not None]
        assert min(normal) >= 0.95
        assert max(normal) <= 1.2
        assert min(rushed) >= 1.45
        assert sorted(u.timestamp_seconds for u in day) == [u.timestamp_seconds for u in day]


def test_alerts_from_the_acoustic_estimate_alone(days: list[list[DayUtterance]]) -> None:
    _check([run_day(day) for day in days])


def test_alerts_with_word_timings(days: list[list[DayUtterance]]) -> None:
    _check([run_day(day, use_words=True) for day in days])


def test_no_alert_before_the_baseline_is_ready(days: list[list[DayUtterance]]) -> None:
    """A day that starts rushed: the first min_baseline utterances cannot alert."""
    day = days[0]
    rushed_first = [u for u in day if u.episode is not None][:4] + day
    result = run_day(rushed_first)
    assert not any(raised for _, _, _, raised in result.rows[:10])
