"""The fallback's jobs (satellite/nlu/fallback.py): handed in, collected when ready,
given up on when waited for too long or when they fail."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from satellite.audio.chunk import AudioChunk
from satellite.nlu.fallback import FallbackJobs
from satellite.nlu.llm import LlmFallback
from satellite.nlu.recognizer import SOURCE_LLM, IntentResult
from satellite.nlu.settings import LlmSettings

AUDIO = AudioChunk(16000, 2, 1, bytes(320), 0.0)


@pytest.fixture
def fallback() -> Iterator[LlmFallback]:
    """An LLM that is switched off: every text comes back not understood."""
    fallback = LlmFallback(LlmSettings(enabled=False), "en", ("GetTime",))
    yield fallback
    fallback.close(wait=True)


def test_a_job_transcribes_then_classifies(fallback: LlmFallback) -> None:
    jobs = FallbackJobs(fallback, lambda audio: f"{audio.num_frames} frames")
    timings: dict[str, float] = {}
    jobs.submit("u1", AUDIO, "what the grammar heard", timings)
    assert "u1" in jobs
    assert list(jobs.collect(wait_seconds=10.0)) == [
        ("u1", IntentResult(None, source=SOURCE_LLM, text="160 frames"))
    ]
    assert "u1" not in jobs
    assert set(timings) == {"open_stt", "llm"}
    jobs = FallbackJobs(fallback)  # no open transcriber: what the grammar search heard
    jobs.submit("u2", AUDIO, "what the grammar heard", {})
    ((_, result),) = jobs.collect(wait_seconds=10.0)
    assert result.text == "what the grammar heard"


def test_a_job_not_ready_is_kept_unless_waited_for(fallback: LlmFallback) -> None:
    go_on = threading.Event()

    def slow(audio: AudioChunk) -> str:
        go_on.wait(10.0)
        return "later"

    jobs = FallbackJobs(fallback, slow)
    jobs.submit("u1", AUDIO, "", {})
    assert list(jobs.collect()) == []
    assert "u1" in jobs
    assert list(jobs.collect(wait_seconds=0.05)) == [
        ("u1", IntentResult(None, source=SOURCE_LLM))  # given up on
    ]
    assert "u1" not in jobs
    go_on.set()


def test_a_job_that_fails_is_not_understood(fallback: LlmFallback) -> None:
    def broken(audio: AudioChunk) -> str:
        raise RuntimeError("no model")

    jobs = FallbackJobs(fallback, broken)
    jobs.submit("u1", AUDIO, "", {})
    assert list(jobs.collect(wait_seconds=10.0)) == [("u1", IntentResult(None, source=SOURCE_LLM))]
