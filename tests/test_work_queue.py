"""The frame loop's queue of recognition work (satellite/stt/steps.py): work queued
``yielding`` (a check begun early on a guess, which may be for nothing) is done only in
the steps no other work wants, and never puts off the work queued after it."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from satellite.stt.steps import Spent, WorkQueue, bunched, metered, run_through


class _Log:
    """Steps of named jobs, in the order they were done, and the jobs closed early."""

    def __init__(self) -> None:
        self.done: list[str] = []
        self.closed: list[str] = []

    def job(self, name: str, steps: int) -> Generator[None, None, str]:
        finished = False
        try:
            for index in range(steps):
                self.done.append(f"{name}{index}")
                yield
            finished = True
            return name
        finally:
            if not finished:
                self.closed.append(name)


def test_a_yielding_job_runs_only_in_the_steps_no_other_work_wants() -> None:
    log = _Log()
    work = WorkQueue()
    work.add(log.job("guess", 10), yielding=True)
    assert work.advance(2) == 2 and log.done == ["guess0", "guess1"]
    work.add(log.job("frame", 1))
    work.add(log.job("decision", 2))
    # queued after the guess, both come first, within the same advance
    assert work.advance(4) == 4
    assert log.done[2:] == ["frame0", "decision0", "decision1", "guess2"]
    assert work.busy
    work.finish()
    assert log.done[-1] == "guess9" and not work.busy and not log.closed


def test_work_queued_during_a_yielding_job_goes_first_from_its_next_step() -> None:
    """A frame heard every 10 ms: the guess gets what is left of each frame's budget."""
    log = _Log()
    work = WorkQueue()
    work.add(log.job("guess", 6), yielding=True)
    for frame in range(3):
        work.add(log.job(f"frame{frame}.", 1))
        assert work.advance(3) == 3
    assert log.done == [
        "frame0.0", "guess0", "guess1",
        "frame1.0", "guess2", "guess3",
        "frame2.0", "guess4", "guess5",
    ]  # fmt: skip


def test_normal_work_keeps_its_order_and_yielding_work_its_own() -> None:
    log = _Log()
    work = WorkQueue()
    work.add(log.job("g", 2), yielding=True)
    work.add(log.job("a", 2))
    work.add(log.job("h", 1), yielding=True)
    work.add(log.job("b", 1))
    work.finish()
    assert log.done == ["a0", "a1", "b0", "g0", "g1", "h0"]


def test_a_withdrawn_yielding_job_is_left_to_whoever_took_it_back() -> None:
    log = _Log()
    work = WorkQueue()
    guess = log.job("guess", 5)
    work.add(guess, yielding=True)
    work.advance(2)
    assert work.withdraw(guess) and not work.withdraw(guess)
    assert not work.busy and work.advance(3) == 0
    assert run_through(guess) == "guess"  # the rest done by who took it back
    assert log.done == [f"guess{i}" for i in range(5)] and not log.closed


def test_kept_work_is_done_on_a_drop_and_yielding_work_is_closed() -> None:
    log = _Log()
    work = WorkQueue()
    work.add(log.job("guess", 5), yielding=True)
    work.advance(1)
    work.add(log.job("decision", 2), keep=True)
    work.add(log.job("next frame", 1))
    work.drop()
    assert log.done == ["guess0", "decision0", "decision1"]
    assert log.closed == ["guess"] and not work.busy


def test_on_a_drop_kept_work_may_take_back_a_yielding_job_and_do_it() -> None:
    log = _Log()
    work = WorkQueue()
    guess = log.job("guess", 3)
    work.add(guess, yielding=True)

    def decision() -> Generator[None, None, None]:
        work.withdraw(guess)
        yield from guess

    work.add(decision(), keep=True)
    work.drop()
    assert log.done == ["guess0", "guess1", "guess2"] and not log.closed


def test_yielding_work_is_never_kept() -> None:
    with pytest.raises(ValueError, match="never kept"):
        WorkQueue().add(_Log().job("guess", 1), keep=True, yielding=True)


def test_closing_bunched_or_metered_steps_closes_the_steps_inside() -> None:
    log = _Log()
    bunch = bunched(log.job("search", 9), 3)
    next(bunch)
    bunch.close()
    spent = Spent()
    clock = iter(float(t) for t in range(100))
    timing = metered(log.job("timed", 9), spent, clock=lambda: next(clock))
    next(timing)
    next(timing)
    timing.close()
    assert log.closed == ["search", "timed"]
    assert log.done == ["search0", "search1", "search2", "timed0", "timed1"]
    assert spent.ms == 2000.0  # the steps done, one clock tick (1 s) each
