"""Settings of the speech-rate care signal (config section ``prosody``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import voluptuous as vol

from ..config_base import (
    ConfigError,
    Section,
    check_boolean,
    check_choice,
    check_integer,
    check_number,
    check_optional,
    check_path,
    option,
)

MEASURES = ("articulation", "speaking")
DEFAULT_QUESTION = "You sound in a hurry. Is everything all right?"


def _text(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value.strip()) <= 200:
        raise vol.Invalid(f"expected a sentence, got {value!r}. Fix: write 1-200 characters")
    return value.strip()


@dataclass(frozen=True)
class ProsodySettings(Section):
    """Speech rate per utterance, a baseline per speaker, and rushed-speech alerts."""

    enabled: bool = option(
        True, check_boolean, "Measure speech rate and raise rushed-speech alerts"
    )
    measure: str = option(
        "articulation",
        check_choice(MEASURES),
        "Rate compared with the baseline: articulation (pauses of 150 ms "
        "or more left out) or speaking (whole utterance)",
    )
    min_syllables: int = option(
        6, check_integer(2, 50), "Utterances with fewer syllables are not judged (2-50)"
    )
    prior_rate: float = option(
        4.3,
        check_number(2.0, 8.0, " syllables/s"),
        "Population prior the baseline starts from, syllables/s (2-8); "
        "older adults speak at about 4.3",
    )
    prior_weight: int = option(
        3, check_integer(0, 50), "How many utterances the prior counts as in the baseline (0-50)"
    )
    baseline_size: int = option(
        50, check_integer(5, 1000), "Judged utterances the rolling baseline keeps (5-1000)"
    )
    min_baseline: int = option(
        10, check_integer(1, 1000), "Judged utterances of a speaker before alerts can fire (1-1000)"
    )
    rushed_ratio: float = option(
        1.35, check_number(1.05, 3.0), "Rate / baseline at which an utterance counts as rushed"
    )
    rushed_count: int = option(
        2, check_integer(1, 20), "Alert when this many of the last rushed_window are rushed"
    )
    rushed_window: int = option(
        3, check_integer(1, 20), "Utterances looked at for rushed_count (1-20)"
    )
    high_ratio: float = option(
        1.6, check_number(1.05, 4.0), "One utterance at or above this ratio alerts at once (high)"
    )
    clear_ratio: float = option(
        1.2, check_number(1.0, 3.0), "Below this ratio an utterance counts as calm again"
    )
    clear_count: int = option(
        3, check_integer(1, 50), "Calm utterances in a row that clear an alert (1-50)"
    )
    cooldown_seconds: float = option(
        600.0,
        check_number(0.0, 86400.0, " s"),
        "After an alert clears, no new alert for this long, s",
    )
    max_disagreement: float = option(
        1.6,
        check_number(1.1, 5.0),
        "Recognised words whose rate differs from the acoustic "
        "estimate by more than this factor are not trusted",
    )
    ask_aloud: bool = option(
        False, check_boolean, "Ask the resident a question aloud when an alert is raised"
    )
    question: str = option(DEFAULT_QUESTION, _text, "What to ask when ask_aloud is on")
    state_path: str | None = option(
        None,
        check_optional(
            check_path(
                "the baselines file, such as /var/lib/pocket-satellite/prosody.json, or write null"
            )
        ),
        "JSON file that keeps the baselines across restarts; null keeps them in memory only",
    )

    def __post_init__(self) -> None:
        problems = []
        if self.rushed_count > self.rushed_window:
            problems.append(
                f"prosody.rushed_count: {self.rushed_count} is larger than "
                f"rushed_window ({self.rushed_window}). Fix: lower rushed_count "
                "or raise rushed_window"
            )
        if not self.clear_ratio < self.rushed_ratio <= self.high_ratio:
            problems.append(
                "prosody.rushed_ratio: the ratios must satisfy clear_ratio < "
                "rushed_ratio <= high_ratio. Fix: e.g. 1.2, 1.35 and 1.6"
            )
        if problems:
            raise ConfigError("config", problems)
