"""A stage that raises is reported, reset, and listening goes on."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.events import StageError, UtteranceEnded, WakeDetected
from satellite.frontend.base import FrameFilter
from satellite.pipeline import Pipeline
from satellite.stages import build_stages
from tests import synth

pytestmark = pytest.mark.usefixtures("need_espeak")


class FailingFilter:
    """Wraps a real stage and raises on chosen frames (a fault the real one can't make)."""

    def __init__(self, inner: FrameFilter, fail_at_seconds: set[float]) -> None:
        self.inner = inner
        self.name = inner.name
        self.fail_at = {round(t, 2) for t in fail_at_seconds}
        self.resets = 0

    def process(self, frame: AudioChunk) -> AudioChunk:
        if round(frame.timestamp_seconds, 2) in self.fail_at:
            raise RuntimeError(f"boom at {frame.timestamp_seconds:.2f}")
        return self.inner.process(frame)

    def reset(self) -> None:
        self.resets += 1
        self.inner.reset()


def _scene_twice() -> tuple[synth.Float, float]:
    scene = synth.wake_scene("turn on the kitchen light", "en-us", 150)
    return np.concatenate([scene.audio, synth.silence(1.0), scene.audio]), len(
        scene.audio
    ) / synth.RATE + 1.0


def test_failing_noise_stage_is_reset_and_listening_goes_on() -> None:
    audio, second_start = _scene_twice()
    stages = build_stages(Config())
    failing = FailingFilter(stages.noise, {0.5, 0.51, second_start - 0.5})
    stages.noise = failing
    events = Pipeline(stages).process(synth.to_chunk(audio))
    errors = [e for e in events if isinstance(e, StageError)]
    assert [e.stage for e in errors] == ["noise", "noise", "noise"]
    assert errors[0].error == "RuntimeError" and "boom" in errors[0].message
    assert failing.resets == 3
    assert len([e for e in events if isinstance(e, WakeDetected)]) == 2
    assert len([e for e in events if isinstance(e, UtteranceEnded)]) == 2


def test_failing_vad_while_listening_does_not_lose_the_utterance() -> None:
    scene = synth.wake_scene("turn on the kitchen light", "en-us", 150)
    stages = build_stages(Config())
    real_vad = stages.vad
    calls = {"n": 0}

    class FlakyVad:
        name = "vad"
        lag_seconds = real_vad.lag_seconds
        end_lag_seconds = real_vad.end_lag_seconds
        warm_up_seconds = real_vad.warm_up_seconds

        def process(self, frame: AudioChunk) -> float:
            calls["n"] += 1
            if calls["n"] == 120:
                raise ValueError("vad glitch")
            return real_vad.process(frame)

        def reset(self) -> None:
            real_vad.reset()

    stages.vad = FlakyVad()
    pipeline = Pipeline(stages)
    events = pipeline.process(synth.to_chunk(scene.audio))
    assert [e.stage for e in events if isinstance(e, StageError)] == ["vad"]
    utterances = [e for e in events if isinstance(e, UtteranceEnded)]
    assert len(utterances) == 1
    assert pipeline.errors_by_stage == {"vad": 1}
