"""The frame loop is not held up by recognition: a whole-utterance search is done a few
steps per frame, between frames, and what it decides comes out once it is done, the same
as had it been done at once (issue 20).

Counts and order, never wall-clock time: a search of 40 steps (a recognizer's search
aside of an utterance: each step stands for a 10 ms frame searched) goes on while
frames keep being consumed, never more than ``stt.steps_per_frame`` steps a frame.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Sequence

import pytest

from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk
from satellite.config import Config
from satellite.events import Event, UtteranceEnded
from satellite.nlu.events import IntentRecognized
from satellite.pipeline import build_pipeline
from satellite.stt.base import SttResult, WordTiming
from satellite.stt.steps import WorkQueue, run_through
from satellite.understanding import EARLY_ENDPOINT_REASON
from tests import synth
from tests.fake_recognizer import Heard, understanding_with

#: Per frame against the phone loop: below every need (rejected) / far above it.
POOR = -45.0
GOOD = -5.0
SEARCH_STEPS = 40


class _SlowAside(Heard):
    """Streams a result it does not trust; searched again from its own mean (in
    ``SEARCH_STEPS`` steps), it hears a trusted one. Every step goes into ``log``."""

    def __init__(self, log: list[str], spoken_at: float) -> None:
        super().__init__("turn on the heater", POOR)
        words = tuple(
            WordTiming(word, spoken_at + 0.1 * i, spoken_at + 0.1 * (i + 1))
            for i, word in enumerate(["what", "time", "is", "it"])
        )
        self.again = SttResult("what time is it", 0.5, words, True, GOOD)
        self.log = log

    def search_own_mean(self, frames: Sequence[AudioChunk]) -> SttResult:
        return run_through(self.search_own_mean_steps(frames))

    def search_own_mean_steps(
        self, frames: Sequence[AudioChunk]
    ) -> Generator[None, None, SttResult]:
        for _ in range(SEARCH_STEPS):
            self.log.append("step")
            yield
        return self.again

    def resume_steps(self) -> Generator[None, None, None]:
        yield

    def search_whole_steps(
        self, frames: Sequence[AudioChunk], context: AudioChunk | None = None
    ) -> Generator[None, None, SttResult]:
        yield
        return self.again


def _config(steps_per_frame: int) -> Config:
    base = Config()
    return dataclasses.replace(
        base, stt=dataclasses.replace(base.stt, steps_per_frame=steps_per_frame)
    )


def _replay(steps_per_frame: int) -> tuple[list[str], list[Event]]:
    """A command after the wake word, frame by frame: the log of frames consumed and
    search steps done, in order, and the events."""
    log: list[str] = []
    config = _config(steps_per_frame)
    scene = synth.wake_scene("what time is it")
    recognizer = _SlowAside(log, scene.command_start_seconds)
    pipeline = build_pipeline(config, understanding=understanding_with(recognizer, config))
    samples = synth.to_chunk(scene.audio).to_int16()
    events: list[Event] = []
    for offset in range(0, len(samples), FRAME_SAMPLES):
        seconds = offset / synth.RATE
        frame = AudioChunk.from_int16(
            samples[offset : offset + FRAME_SAMPLES], timestamp_seconds=seconds
        )
        events += pipeline.process(frame)
        log.append("frame")
        if any(isinstance(e, IntentRecognized) for e in events) and "intent" not in log:
            log.append("intent")
    events += pipeline.end_of_input()
    return log, events


@pytest.mark.usefixtures("need_espeak")
def test_frames_keep_being_consumed_while_an_utterance_is_searched_again() -> None:
    log, events = _replay(steps_per_frame=4)
    assert log.count("step") == SEARCH_STEPS  # searched again once (at the pause)
    first, last = log.index("step"), len(log) - log[::-1].index("step") - 1
    during = log[first : last + 1]
    # frames went on between the search's steps, at most 4 steps (a frame's budget) each
    assert during.count("frame") >= SEARCH_STEPS // 4 - 1
    runs = "".join("s" if item == "step" else "|" for item in during).split("|")
    assert max(len(run) for run in runs) <= 4
    # decided once the search was done: the trusted search again ended it early
    assert log.index("intent") > last
    (intent,) = [e for e in events if isinstance(e, IntentRecognized)]
    assert intent.intent == "GetTime"
    (ended,) = [e for e in events if isinstance(e, UtteranceEnded)]
    assert ended.reason == EARLY_ENDPOINT_REASON


@pytest.mark.usefixtures("need_espeak")
def test_what_is_decided_does_not_depend_on_how_the_work_is_spread() -> None:
    """Done at once (a budget larger than any search) or spread over frames: the same
    intent, and the utterance ends the same way, if later (spread so thin that the pause
    is decided only after the full trailing silence, it would end there: see
    ``stt.steps_per_frame``)."""
    spread = _replay(steps_per_frame=2)[1]
    at_once = _replay(steps_per_frame=1000)[1]

    def outcome(events: list[Event]) -> list[tuple[str, object]]:
        return [
            (e.type_name, getattr(e, "intent", getattr(e, "reason", None)))
            for e in events
            if isinstance(e, IntentRecognized | UtteranceEnded)
        ]

    assert outcome(spread) == outcome(at_once)
    (early,) = [e for e in at_once if isinstance(e, UtteranceEnded)]
    (late,) = [e for e in spread if isinstance(e, UtteranceEnded)]
    assert early.end_seconds == late.end_seconds  # the same speech, decided later
    assert early.timestamp_seconds <= late.timestamp_seconds


def test_the_work_queue_keeps_order_and_budget() -> None:
    done: list[str] = []

    def job(name: str, steps: int) -> Generator[None, None, None]:
        for index in range(steps):
            done.append(f"{name}{index}")
            yield

    work = WorkQueue()
    work.add(job("a", 3))
    work.add(job("b", 2))
    assert work.advance(2) == 2 and done == ["a0", "a1"]
    assert work.advance(2) == 2 and done == ["a0", "a1", "a2", "b0"]
    work.finish()
    assert done[-1] == "b1" and not work.busy


def test_dropping_work_first_does_what_is_kept_and_all_before_it() -> None:
    done: list[str] = []

    def job(name: str) -> Generator[None, None, None]:
        done.append(name)
        yield

    work = WorkQueue()
    work.add(job("frame"))
    work.add(job("decision"), keep=True)
    work.add(job("next frame"))
    work.drop()
    assert done == ["frame", "decision"] and not work.busy
