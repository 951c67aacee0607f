"""Rolling speech-rate baselines per satellite and per speaker, kept on disk.

Each key (the satellite, or a known speaker) keeps the rates of its last N judged
utterances. The baseline is their median, with the MAD (scaled to match a standard
deviation) as the spread. Until N utterances are in, ``prior_weight`` copies of the
population prior (older adults: ~4.3 syllables/s) join the pool, so a new speaker starts
from the prior and moves to their own rate as utterances arrive.

The file is JSON, ``{"version": 1, "baselines": {key: [rate, ...]}}``, written
atomically after every update; a damaged file is set aside (``.bad``) with a warning.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from ..files import replace_atomically

_LOGGER = logging.getLogger(__name__)

#: Key of the satellite-wide baseline (every judged utterance goes there).
SATELLITE_KEY = "_satellite"
FILE_VERSION = 1
#: MAD x this = standard deviation, for normally distributed rates.
MAD_TO_SD = 1.4826


@dataclass(frozen=True, slots=True)
class Baseline:
    """A robust summary of recent rates, syllables/s."""

    median: float
    mad: float
    #: Real judged utterances behind it (the prior not counted).
    count: int


class BaselineStore:
    """Rates of the last ``size`` judged utterances for each key, optionally persisted."""

    def __init__(
        self, size: int, prior_rate: float, prior_weight: int, path: Path | None = None
    ) -> None:
        self.size = size
        self.prior_rate = prior_rate
        self.prior_weight = prior_weight
        self.path = path
        self._rates: dict[str, deque[float]] = {}
        if path is not None:
            self._load(path)

    def keys(self) -> list[str]:
        """Keys with at least one rate."""
        return sorted(self._rates)

    def get(self, key: str) -> Baseline:
        """The baseline of ``key`` (the prior alone when nothing is known yet)."""
        rates = list(self._rates.get(key, ()))
        pool = rates + [self.prior_rate] * max(0, min(self.prior_weight, self.size - len(rates)))
        if not pool:
            return Baseline(self.prior_rate, 0.0, 0)
        median = statistics.median(pool)
        mad = statistics.median(abs(r - median) for r in pool) * MAD_TO_SD
        return Baseline(median, mad, len(rates))

    def add(self, rate: float, *keys: str) -> None:
        """Record a judged utterance's rate under each key, then save."""
        if not rate > 0:
            raise ValueError(f"A rate must be positive, got {rate}")
        for key in keys:
            self._rates.setdefault(key, deque(maxlen=self.size)).append(float(rate))
        if self.path is not None:
            self._save(self.path)

    def clear(self) -> None:
        """Forget every baseline (and the file's contents, when there is one)."""
        self._rates.clear()
        if self.path is not None:
            self._save(self.path)

    # --- file -------------------------------------------------------------------------

    def _load(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        try:
            data = json.loads(text)
            if data.get("version") != FILE_VERSION:
                raise ValueError(f"unknown version {data.get('version')!r}")
            for key, rates in data["baselines"].items():
                if not isinstance(key, str) or not isinstance(rates, list):
                    raise ValueError(f"bad entry {key!r}")
                good = [
                    float(r)
                    for r in rates
                    if isinstance(r, int | float) and not isinstance(r, bool) and r > 0
                ]
                self._rates[key] = deque(good[-self.size :], maxlen=self.size)
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            bad = path.with_suffix(path.suffix + ".bad")
            _LOGGER.warning(
                "Speech-rate baselines in %s are unreadable (%s); starting from "
                "the prior and keeping the old file as %s",
                path,
                err,
                bad,
            )
            self._rates.clear()
            os.replace(path, bad)

    def _save(self, path: Path) -> None:
        data = {
            "version": FILE_VERSION,
            "baselines": {k: [round(r, 4) for r in v] for k, v in self._rates.items()},
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, json.dumps(data))
