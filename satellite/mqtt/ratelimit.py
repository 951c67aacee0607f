"""Logging that says a repeated problem once, then at most once per interval."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

#: A repeated warning is logged at most this often, s (wall clock).
DEFAULT_INTERVAL_SECONDS = 60.0


class RateLimitedLog:
    """Log the first message per key, then at most one per ``interval_seconds``.

    The message after a quiet spell says how many were suppressed in between, so
    nothing is hidden, only summarised.
    """

    def __init__(
        self,
        logger: logging.Logger,
        interval_seconds: float = DEFAULT_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._interval = interval_seconds
        self._clock = clock
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def log(self, level: int, key: str, message: str, *args: Any, exc_info: bool = False) -> bool:
        """Log ``message % args`` under ``key`` unless one was logged recently."""
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self._interval:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return False
        self._last[key] = now
        suppressed = self._suppressed.pop(key, 0)
        if suppressed:
            message += " (%d more like this since the last report)"
            args = (*args, suppressed)
        self._logger.log(level, message, *args, exc_info=exc_info)
        return True

    def report(self, key: str, message: str, *args: Any) -> bool:
        """Rate-limited warning."""
        return self.log(logging.WARNING, key, message, *args)
