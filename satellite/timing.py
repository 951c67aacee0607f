"""Timings kept in utterance reports."""

from __future__ import annotations

import time


def ms_since(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.perf_counter()`` reading), to 0.01 ms."""
    return round((time.perf_counter() - started) * 1000.0, 2)
