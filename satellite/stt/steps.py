"""Recognition work done a few steps at a time between frames, in the order it was asked.

PocketSphinx holds the GIL while it searches (``Decoder.process_raw`` releases it
nowhere: a thread that searches makes the frame loop wait as long as a search inline),
so a search cannot run beside the frame loop. Instead each piece of work is a generator
that yields after each step (a 10 ms frame searched, or a decision that needs no
search), and the frame loop does a few steps per frame (``WorkQueue.advance``), so a
whole-utterance search is spread over the frames that follow instead of held up in one.
The budget is counted in steps, not in time, so a replay decides the same at the same
frames however busy the machine is.

Work that may prove to be for nothing (a check begun early on a guess at what was said,
understanding/early_check.py) is queued ``yielding``: it is done only in the steps no
other work wants, so it never puts off what is queued after it.
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
    """``steps`` ``size`` at a time (a step of the frame loop's budget does ``size``);
    closed, it closes them."""
    try:
        while True:
            for _ in range(size):
                try:
                    next(steps)
                except StopIteration as done:
                    result: T = done.value
                    return result
            yield
    finally:
        steps.close()


@dataclass(slots=True)
class Spent:
    """Time spent so far in some steps, ms (see ``metered``)."""

    ms: float = 0.0


def around(steps: Steps[T], before: Callable[[], None], after: Callable[[], None]) -> Steps[T]:
    """``steps``, ``before`` called before each of them and ``after`` after it (also when
    it raises or is the last); closed, it closes them."""
    try:
        while True:
            before()
            try:
                next(steps)
            except StopIteration as done:
                result: T = done.value
                return result
            finally:
                after()
            yield
    finally:
        steps.close()


def metered(
    steps: Steps[T], spent: Spent, clock: Callable[[], float] = time.perf_counter
) -> Steps[T]:
    """``steps``, the time spent in them (not between them) by ``clock`` added to ``spent``
    step by step (so it is known of steps closed before their end); closed, it closes
    them."""
    started = [0.0]

    def start() -> None:
        started[0] = clock()

    def add() -> None:
        spent.ms += (clock() - started[0]) * 1000

    return around(steps, start, add)


def timed(
    steps: Steps[T], clock: Callable[[], float] = time.perf_counter
) -> Steps[tuple[T, float]]:
    """``steps`` and the time spent in them (not between them) by ``clock``, ms."""
    spent = Spent()
    result = yield from metered(steps, spent, clock)
    return result, round(spent.ms, 2)


@dataclass(slots=True)
class _Job:
    steps: Steps[Any]
    #: Done even when the utterance in progress is dropped (a conclusion of one heard).
    keep: bool


class WorkQueue:
    """Work for the recognizer and on its results, done in order, a few steps per frame;
    work queued ``yielding`` only in the steps nothing else wants."""

    def __init__(self) -> None:
        self._jobs: collections.deque[_Job] = collections.deque()
        #: Yielding work, in order: done only while no other work waits.
        self._spare: collections.deque[_Job] = collections.deque()

    @property
    def busy(self) -> bool:
        """Whether any work is waiting (yielding work too)."""
        return bool(self._jobs or self._spare)

    def add(self, steps: Steps[Any], keep: bool = False, yielding: bool = False) -> None:
        """Do ``steps`` after the work already waiting (``keep``: even if the utterance in
        progress is dropped, see ``drop``). ``yielding``: only while no other work waits,
        a step at a time (work queued later goes first, from its next step on); work
        that may be for nothing, which whoever queued it may take back (``withdraw``),
        and which ``drop`` closes."""
        if keep and yielding:
            raise ValueError("yielding work is never kept: it may be for nothing")
        (self._spare if yielding else self._jobs).append(_Job(steps, keep))

    def withdraw(self, steps: Steps[Any]) -> bool:
        """Take the yielding work ``steps`` out of the queue as it stands (not closed: who
        takes it back does the rest, or closes it); whether it was waiting."""
        for job in self._spare:
            if job.steps is steps:
                self._spare.remove(job)
                return True
        return False

    def advance(self, budget: int) -> int:
        """Do up to ``budget`` steps of the waiting work, yielding work only when no other
        waits (a job's end that follows its last step is not counted); return how many
        were done. A job that raises is dropped and the error goes on."""
        done = 0
        while done < budget:
            jobs = self._jobs or self._spare
            if not jobs:
                break
            job = jobs[0]
            try:
                next(job.steps)
            except StopIteration:
                jobs.popleft()
                continue
            except BaseException:
                jobs.popleft()
                raise
            done += 1
        return done

    def finish(self) -> None:
        """Do all the waiting work now (yielding work too)."""
        while self.busy:
            self.advance(1_000_000)

    def drop(self) -> None:
        """Drop the waiting work, but first do all of it up to the last job that is to be
        kept (the conclusion of an utterance heard: it must come out as if it had been
        done at once, so with everything asked before it); the yielding work is closed
        after that (the kept work may have taken it back and done it)."""
        kept = [i for i, job in enumerate(self._jobs) if job.keep]
        jobs = list(self._jobs)[: kept[-1] + 1] if kept else []
        self._jobs = collections.deque(jobs)
        spare, self._spare = list(self._spare), collections.deque()
        try:
            self.finish()
        finally:
            self._jobs.clear()
            spare += self._spare
            self._spare.clear()
            for job in spare:
                job.steps.close()
