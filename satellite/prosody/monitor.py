"""The prosody stage: utterance in, ``Prosody`` / ``Alert`` / ``AlertCleared`` events out.

It sits after the utterance recorder. For each ``UtteranceEnded`` (optionally with the
recogniser's word timings and a speaker name) it measures the speech rate, decides
whether the utterance can be judged, compares the rate with the speaker's baseline,
updates the baseline and runs the alert policy.

An utterance is not judged (``reason`` = "insufficient speech", no baseline update, no
alert) when the audio is clipped, when its "syllables" are steady tones (music, beeps),
when it has fewer than ``min_syllables`` syllables, or when the rate is implausible.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..audio.chunk import AudioChunk
from ..events import Event, UtteranceEnded
from .acoustic import AcousticAnalysis, analyse_chunk
from .baseline import SATELLITE_KEY, Baseline, BaselineStore
from .events import INSUFFICIENT_SPEECH, RUSHED_SPEECH, Alert, AlertCleared, Prosody
from .policy import AlertPolicy
from .rate import (
    RateEstimate,
    WordsLike,
    acoustic_estimate,
    as_word_timings,
    fuse,
    lexical_estimate,
)
from .settings import ProsodySettings
from .syllables import SyllableDictionary, default_dictionary

_LOGGER = logging.getLogger(__name__)

#: More than this share of samples at full scale: the audio is clipped.
MAX_CLIPPED_FRACTION = 0.005
#: Median nucleus steadiness at or above this: steady tones, not speech (speech < ~0.93).
MAX_STEADINESS = 0.96
#: Rates outside this range (syllables/s) are not speech as people speak it.
PLAUSIBLE_RATE = (1.0, 12.0)
#: Margins around the recorder's speech times where the estimator looks for speech, s.
ONSET_MARGIN_SECONDS = 0.15
OFFSET_MARGIN_SECONDS = 0.25


@dataclass(frozen=True, slots=True)
class Measurement:
    """A rate estimate and, when it cannot be judged, why not."""

    estimate: RateEstimate | None
    analysis: AcousticAnalysis
    detail: str | None

    @property
    def judged(self) -> bool:
        """True when the rate can be compared with a baseline."""
        return self.detail is None and self.estimate is not None


def measure(
    audio: AudioChunk,
    settings: ProsodySettings,
    within: tuple[float, float] | None = None,
    words: WordsLike | None = None,
    dictionary: SyllableDictionary | None = None,
) -> Measurement:
    """Estimate the rate of one utterance and check that it can be judged."""
    analysis = analyse_chunk(audio, within)
    acoustic = acoustic_estimate(analysis)
    lexical = lexical_estimate(words, dictionary) if words is not None else None
    estimate = fuse(acoustic, lexical, settings.max_disagreement)
    detail: str | None = None
    rate = estimate.rate(settings.measure) if estimate is not None else None
    if analysis.clipped_fraction > MAX_CLIPPED_FRACTION:
        detail = f"clipped audio ({100 * analysis.clipped_fraction:.1f}% of samples)"
    elif analysis.nuclei == 0 or estimate is None or rate is None:
        detail = "no voiced speech"
    elif analysis.nuclei >= 3 and analysis.steadiness >= MAX_STEADINESS:
        detail = "steady tones, not speech"
    elif estimate.syllables < settings.min_syllables:
        detail = f"{estimate.syllables:.0f} syllables, fewer than {settings.min_syllables}"
    elif not PLAUSIBLE_RATE[0] <= rate <= PLAUSIBLE_RATE[1]:
        detail = f"implausible rate {rate:.1f} syllables/s"
    return Measurement(estimate, analysis, detail)


class ProsodyMonitor:
    """Speech rate, baselines and rushed-speech alerts for a stream of utterances."""

    name = "prosody"

    def __init__(
        self,
        settings: ProsodySettings,
        baselines: BaselineStore | None = None,
        dictionary: SyllableDictionary | None = None,
    ) -> None:
        self.settings = settings
        path = Path(settings.state_path).expanduser() if settings.state_path else None
        self.baselines = (
            baselines
            if baselines is not None
            else BaselineStore(
                settings.baseline_size, settings.prior_rate, settings.prior_weight, path
            )
        )
        self.policy = AlertPolicy(settings)
        # read now (about 0.3 s), not in the frame that decides the first utterance
        self.dictionary = dictionary if dictionary is not None else default_dictionary()

    def process(
        self, utterance: UtteranceEnded, words: WordsLike | None = None, speaker: str | None = None
    ) -> list[Event]:
        """Judge one utterance; ``words`` (objects with ``word``, ``start_seconds`` and
        ``end_seconds``, or tuples of those) are in input time, like the utterance."""
        if utterance.audio is None:
            raise ValueError(f"Utterance {utterance.utterance_id} carries no audio")
        offset = utterance.audio.timestamp_seconds
        within = (
            utterance.start_seconds - offset - ONSET_MARGIN_SECONDS,
            utterance.end_seconds - offset + OFFSET_MARGIN_SECONDS,
        )
        shifted = None if words is None else as_word_timings(words, offset)
        measurement = measure(utterance.audio, self.settings, within, shifted, self.dictionary)
        return self.judge(
            measurement, utterance.utterance_id, utterance.timestamp_seconds, speaker, offset
        )

    def judge(
        self,
        measurement: Measurement,
        utterance_id: str,
        timestamp_seconds: float,
        speaker: str | None = None,
        offset_seconds: float = 0.0,
    ) -> list[Event]:
        """Turn a measurement into events, updating the baseline and the alert policy."""
        s = self.settings
        keys = (speaker, SATELLITE_KEY) if speaker else (SATELLITE_KEY,)
        baseline = self._baseline(speaker)
        estimate = measurement.estimate
        rate = estimate.rate(s.measure) if estimate is not None else None
        ratio = (
            rate / baseline.median
            if measurement.judged and rate is not None and baseline.median > 0
            else None
        )
        events: list[Event] = [
            self._prosody_event(
                measurement,
                utterance_id,
                timestamp_seconds,
                speaker,
                offset_seconds,
                baseline,
                ratio,
            )
        ]
        if ratio is None or rate is None:
            return events
        key = speaker or SATELLITE_KEY
        decision = self.policy.update(
            key, ratio, timestamp_seconds, ready=baseline.count >= s.min_baseline
        )
        self.baselines.add(rate, *keys)
        if decision.raised:
            _LOGGER.info(
                "Rushed speech (%s): rate %.2f is %.2fx the baseline %.2f",
                decision.raised,
                rate,
                ratio,
                baseline.median,
            )
            events.append(
                Alert(
                    timestamp_seconds=timestamp_seconds,
                    utterance_id=utterance_id,
                    kind=RUSHED_SPEECH,
                    severity=decision.raised,
                    ratio=round(ratio, 3),
                    rate=round(rate, 3),
                    baseline=round(baseline.median, 3),
                    speaker=speaker,
                    say=s.question if s.ask_aloud else None,
                )
            )
        elif decision.cleared:
            _LOGGER.info("Rushed-speech alert cleared after %.0f s", decision.duration_seconds)
            events.append(
                AlertCleared(
                    timestamp_seconds=timestamp_seconds,
                    utterance_id=utterance_id,
                    kind=RUSHED_SPEECH,
                    ratio=round(ratio, 3),
                    duration_seconds=round(decision.duration_seconds, 3),
                    speaker=speaker,
                )
            )
        return events

    def reset(self) -> None:
        """Forget alert state (baselines are kept: they are the speaker's history)."""
        self.policy.reset()

    def _baseline(self, speaker: str | None) -> Baseline:
        """The speaker's own baseline once it is ready, else the satellite's."""
        if speaker:
            own = self.baselines.get(speaker)
            if own.count >= self.settings.min_baseline:
                return own
        return self.baselines.get(SATELLITE_KEY)

    def _prosody_event(
        self,
        m: Measurement,
        utterance_id: str,
        timestamp_seconds: float,
        speaker: str | None,
        offset: float,
        baseline: Baseline,
        ratio: float | None,
    ) -> Prosody:
        e = m.estimate
        a = m.analysis
        return Prosody(
            timestamp_seconds=round(timestamp_seconds, 3),
            utterance_id=utterance_id,
            judged=ratio is not None,
            source=e.source if e is not None else "none",
            syllables=round(e.syllables, 2) if e is not None else 0.0,
            syllables_per_second=_round(e.rate(self.settings.measure) if e is not None else None),
            speaking_rate=_round(e.speaking_rate if e is not None else None),
            articulation_rate=_round(e.articulation_rate if e is not None else None),
            speech_seconds=round(e.speech_seconds if e is not None else 0.0, 3),
            articulation_seconds=round(e.articulation_seconds if e is not None else 0.0, 3),
            baseline=_round(baseline.median),
            baseline_mad=_round(baseline.mad),
            baseline_count=baseline.count,
            ratio=_round(ratio),
            start_seconds=round(offset + a.speech_start_seconds, 3),
            end_seconds=round(offset + a.speech_end_seconds, 3),
            speaker=speaker,
            reason=None if ratio is not None else INSUFFICIENT_SPEECH,
            detail=m.detail,
        )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def judge_all(
    monitor: ProsodyMonitor,
    measurements: Sequence[tuple[Measurement, float]],
    speaker: str | None = None,
) -> list[Event]:
    """Feed (measurement, timestamp) pairs in order; all events (simulations, the bench)."""
    events: list[Event] = []
    for i, (m, when) in enumerate(measurements):
        events.extend(monitor.judge(m, f"u{i + 1}", when, speaker))
    return events
