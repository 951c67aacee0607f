"""When a run of fast utterances becomes a rushed-speech alert, and when it clears.

Per speaker (or the satellite), over judged utterances only:

* **raise** when ``rushed_count`` of the last ``rushed_window`` ratios are at or above
  ``rushed_ratio`` (severity ``moderate``), or one ratio is at or above ``high_ratio``
  (severity ``high``) - but only once the baseline is ready, and not within
  ``cooldown_seconds`` of the previous alert clearing;
* **escalate** an active moderate alert to high when a ratio reaches ``high_ratio``;
* **clear** after ``clear_count`` ratios in a row below ``clear_ratio``; ratios between
  ``clear_ratio`` and ``rushed_ratio`` neither raise nor clear (hysteresis).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .settings import ProsodySettings

MODERATE = "moderate"
HIGH = "high"
_RANK = {None: 0, MODERATE: 1, HIGH: 2}


@dataclass(frozen=True, slots=True)
class Decision:
    """What one utterance changed: a raised (or escalated) severity, or a clearing."""

    raised: str | None = None
    cleared: bool = False
    #: For a clearing: seconds since the alert was first raised.
    duration_seconds: float = 0.0


@dataclass(slots=True)
class _Track:
    recent: deque[float]
    severity: str | None = None
    raised_at: float = 0.0
    calm_run: int = 0
    cleared_at: float | None = None


class AlertPolicy:
    """The k-of-m / high-threshold / hysteresis / cooldown rule, one track per key."""

    def __init__(self, settings: ProsodySettings) -> None:
        self.settings = settings
        self._tracks: dict[str, _Track] = {}

    def active(self, key: str) -> str | None:
        """Severity of the alert active for ``key``, or None."""
        track = self._tracks.get(key)
        return track.severity if track else None

    def update(
        self, key: str, ratio: float, timestamp_seconds: float, ready: bool = True
    ) -> Decision:
        """Feed the ratio of a judged utterance; ``ready`` is false while warming up."""
        s = self.settings
        track = self._tracks.setdefault(key, _Track(deque(maxlen=s.rushed_window)))
        track.recent.append(ratio)
        if track.severity is None:
            severity = self._severity(track, ratio)
            cooling = (
                track.cleared_at is not None
                and timestamp_seconds - track.cleared_at < s.cooldown_seconds
            )
            if severity is None or not ready or cooling:
                return Decision()
            track.severity, track.raised_at, track.calm_run = severity, timestamp_seconds, 0
            return Decision(raised=severity)
        if ratio >= s.high_ratio and _RANK[track.severity] < _RANK[HIGH]:
            track.severity, track.calm_run = HIGH, 0
            return Decision(raised=HIGH)
        track.calm_run = track.calm_run + 1 if ratio < s.clear_ratio else 0
        if track.calm_run < s.clear_count:
            return Decision()
        duration = timestamp_seconds - track.raised_at
        track.severity, track.cleared_at, track.calm_run = None, timestamp_seconds, 0
        track.recent.clear()
        return Decision(cleared=True, duration_seconds=duration)

    def reset(self) -> None:
        """Forget every track (active alerts end silently)."""
        self._tracks.clear()

    def _severity(self, track: _Track, ratio: float) -> str | None:
        s = self.settings
        if ratio >= s.high_ratio:
            return HIGH
        if sum(r >= s.rushed_ratio for r in track.recent) >= s.rushed_count:
            return MODERATE
        return None
