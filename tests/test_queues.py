"""drain: what a queue holds now, in order, without blocking."""

from __future__ import annotations

import queue

from satellite.queues import drain


def test_drain_takes_what_waits_in_order_up_to_a_limit() -> None:
    source: queue.Queue[int] = queue.Queue()
    for n in range(5):
        source.put(n)
    assert drain(source, limit=2) == [0, 1]
    assert drain(source) == [2, 3, 4]
    assert drain(source) == []  # empty: returns at once
    simple: queue.SimpleQueue[str] = queue.SimpleQueue()
    simple.put("a")
    assert drain(simple) == ["a"]
