"""Taking everything a queue holds at once, without blocking."""

from __future__ import annotations

import queue
from typing import TypeVar

T = TypeVar("T")


def drain(source: queue.Queue[T] | queue.SimpleQueue[T], limit: int | None = None) -> list[T]:
    """What waits in ``source`` now, oldest first (at most ``limit`` items)."""
    items: list[T] = []
    while limit is None or len(items) < limit:
        try:
            items.append(source.get_nowait())
        except queue.Empty:
            break
    return items
