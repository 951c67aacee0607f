"""Taking everything a queue holds at once, without blocking; a queue that wakes its reader."""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class NudgingQueue(queue.Queue[T]):
    """A queue that calls ``on_put`` after each item goes in: a consumer that sleeps on
    something else (the frame loop waiting for audio) is woken to take it at once."""

    def __init__(self, maxsize: int = 0, on_put: Callable[[], None] | None = None) -> None:
        super().__init__(maxsize)
        self.on_put = on_put

    def _put(self, item: T) -> None:
        super()._put(item)
        if self.on_put is not None:
            self.on_put()


def drain(source: queue.Queue[T] | queue.SimpleQueue[T], limit: int | None = None) -> list[T]:
    """What waits in ``source`` now, oldest first (at most ``limit`` items)."""
    items: list[T] = []
    while limit is None or len(items) < limit:
        try:
            items.append(source.get_nowait())
        except queue.Empty:
            break
    return items
