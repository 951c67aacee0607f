"""Recognition work done a few steps at a time between frames, in the order it was asked.

PocketSphinx holds the GIL while it searches (``Decoder.process_raw`` releases it
nowhere: a thread that searches makes the frame loop wait as long as a search inline),
so a search cannot run beside the frame loop. Instead each piece of work is a generator
that yields after each step (a 10 ms frame searched, or a decision that needs no
search), and the frame loop does a few steps per frame (``WorkQueue.advance``), so a
whole-utterance search is spread over the frames that follow instead of held up in one.
The budget is counted in steps, not in time, so a replay decides the same at the same
frames however busy the machine is.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

T = TypeVar("T")
#: Work done a step (about one 10 ms frame's search) at a time, giving a ``T`` at the end.
Steps: TypeAlias = Generator[None, None, T]


def run_through(steps: Steps[T]) -> T:
    """All of ``steps`` at once: their result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result


def one_step(call: Callable[[], T]) -> Steps[T]:
    """``call`` as work of one step (a search that cannot be cut into steps)."""
    result = call()
    yield
    return result


def bunched(steps: Steps[T], size: int) -> Steps[T]:
    """``steps`` ``size`` at a time (a step of the frame loop's budget does ``size``)."""
    while True:
        for _ in range(size):
            try:
                next(steps)
            except StopIteration as done:
                result: T = done.value
                return result
        yield


def timed(
    steps: Steps[T], clock: Callable[[], float] = time.perf_counter
) -> Steps[tuple[T, float]]:
    """``steps`` and the time spent in them (not between them) by ``clock``, ms."""
    spent = 0.0
    while True:
        started = clock()
        try:
            next(steps)
        except StopIteration as done:
            spent += clock() - started
            return done.value, round(spent * 1000, 2)
        spent += clock() - started
        yield


@dataclass(slots=True)
class _Job:
    steps: Steps[Any]
    #: Done even when the utterance in progress is dropped (a conclusion of one heard).
    keep: bool


class WorkQueue:
    """Work for the recognizer and on its results, done in order, a few steps per frame."""

    def __init__(self) -> None:
        self._jobs: collections.deque[_Job] = collections.deque()

    @property
    def busy(self) -> bool:
        """Whether any work is waiting."""
        return bool(self._jobs)

    def add(self, steps: Steps[Any], keep: bool = False) -> None:
        """Do ``steps`` after the work already waiting (``keep``: even if the utterance in
        progress is dropped, see ``drop``)."""
        self._jobs.append(_Job(steps, keep))

    def advance(self, budget: int) -> int:
        """Do up to ``budget`` steps of the waiting work (a job's end that follows its last
        step is not counted); return how many were done. A job that raises is dropped
        and the error goes on."""
        done = 0
        while self._jobs and done < budget:
            job = self._jobs[0]
            try:
                next(job.steps)
            except StopIteration:
                self._jobs.popleft()
                continue
            except BaseException:
                self._jobs.popleft()
                raise
            done += 1
        return done

    def finish(self) -> None:
        """Do all the waiting work now."""
        while self._jobs:
            self.advance(1_000_000)

    def drop(self) -> None:
        """Drop the waiting work, but first do all of it up to the last job that is to be
        kept (the conclusion of an utterance heard: it must come out as if it had been
        done at once, so with everything asked before it)."""
        kept = [i for i, job in enumerate(self._jobs) if job.keep]
        jobs = list(self._jobs)[: kept[-1] + 1] if kept else []
        self._jobs = collections.deque(jobs)
        try:
            self.finish()
        finally:
            self._jobs.clear()
