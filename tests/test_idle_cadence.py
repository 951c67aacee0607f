"""While idle, the frame loop wakes up only when the wake word model decides, and hears
the wake word no later for it; a command for the loop wakes it at once.

The paced source (``run --realtime``) hands frames over once they would have been heard,
several at a time when the loop allows it; the wake word detector says in which frame its
model next decides, and the pipeline allows batching only while nothing goes on.
"""

from __future__ import annotations

import queue
import threading
import time

import numpy as np
import pytest

from satellite.app import MUTED_FRAMES_AT_ONCE, SatelliteApp
from satellite.audio.alsa import AlsaCaptureSource
from satellite.audio.chunk import FRAME_BYTES, AudioChunk
from satellite.audio.io import NullSink
from satellite.audio.realtime import PacedSink, ReplayClock, paced
from satellite.config import Config
from satellite.events import Event, StateChanged, WakeDetected
from satellite.frontend.base import WakeHit
from satellite.frontend.wake import MicroWakeWordDetector
from satellite.mqtt.payloads import Command, Control, SpokenResponse
from satellite.nlu.recognizer import IntentResult
from satellite.pipeline import build_pipeline
from satellite.queues import NudgingQueue
from satellite.tts.espeak import EspeakEngine
from satellite.understanding.dialogue import Dialogue
from tests import synth

#: Frames in the stretch of audio the pacing tests replay (0.3 s).
FRAMES = 30


def _source(frames: int = FRAMES, chunk_frames: int = 7) -> list[AudioChunk]:
    """Noise in chunks of ``chunk_frames`` frames (not a multiple of a batch)."""
    audio = synth.to_chunk(synth.white_noise(frames / 100, 0.01))
    step = chunk_frames * FRAME_BYTES
    return [
        AudioChunk(16000, 2, 1, audio.samples[i : i + step], i / 2 / 16000)
        for i in range(0, len(audio.samples), step)
    ]


def _replay(
    source: list[AudioChunk], frames_per_wake: int, nudge: threading.Event | None = None
) -> list[tuple[AudioChunk, float]]:
    """What ``paced`` hands over, with the replay clock's reading when it did."""
    clock = ReplayClock()

    def wanted() -> int:
        if nudge is not None:
            nudge.set()  # a command came in just as the loop went to sleep
        return frames_per_wake

    return [(chunk, clock.elapsed()) for chunk in paced(source, clock, wanted, nudge)]


@pytest.mark.parametrize("frames_per_wake", [1, 3])
def test_paced_frames_come_whole_in_order_and_never_before_they_were_heard(
    frames_per_wake: int,
) -> None:
    source = _source()
    handed = _replay(source, frames_per_wake)
    assert b"".join(c.samples for c, _ in handed) == b"".join(c.samples for c in source)
    ends = 0.0
    for chunk, at in handed:
        assert abs(chunk.timestamp_seconds - ends) < 1e-9  # contiguous
        assert at >= chunk.end_seconds - 1e-6  # the loop never gets audio before it was heard
        ends = chunk.end_seconds
    sizes = [len(c.samples) // FRAME_BYTES for c, _ in handed]
    # batches of the size allowed: all of them but a first single frame (which starts the
    # clock) and what is left at the end
    assert sizes[0] == 1
    assert all(size == frames_per_wake for size in sizes[1:-1]), sizes
    assert len(handed) == 1 + -(-(FRAMES - 1) // frames_per_wake)


def test_a_nudge_hands_over_what_was_heard_at_once_instead_of_waiting_for_a_batch() -> None:
    nudge = threading.Event()
    handed = _replay(_source(), 3, nudge)
    sizes = [len(c.samples) // FRAME_BYTES for c, _ in handed]
    # woken at every wait, the loop gets the frames heard by then (one, unless the
    # machine stalled), not the three it would have slept for
    assert sum(sizes) == FRAMES
    assert len(handed) > 1 + (FRAMES - 1) // 3, sizes
    for chunk, at in handed:
        assert at >= chunk.end_seconds - 1e-6


def test_a_nudging_queue_calls_back_on_every_put() -> None:
    calls: list[int] = []
    inbox: NudgingQueue[str] = NudgingQueue(2, on_put=lambda: calls.append(1))
    inbox.put("stop")
    inbox.put_nowait("mute")
    assert len(calls) == 2
    assert inbox.get_nowait() == "stop"


@pytest.mark.usefixtures("need_espeak")
def test_a_wake_word_is_only_heard_in_a_frame_announced_as_a_decision() -> None:
    """Batches that end where the detector says its model decides give the same hits, in
    the same frames, as frame-by-frame processing: a batching loop hears it no later."""
    scene = synth.wake_scene("turn on the kitchen light", "en-us", 150)
    samples = synth.to_chunk(scene.audio).samples
    frames = [
        AudioChunk(16000, 2, 1, samples[i : i + FRAME_BYTES], i / 2 / 16000)
        for i in range(0, len(samples) - FRAME_BYTES + 1, FRAME_BYTES)
    ]
    one_by_one = MicroWakeWordDetector(("okay_nabu",), None, 2.0)
    hits: list[WakeHit] = []
    decisions = 0
    for frame in frames:
        announced = one_by_one.frames_to_decision()
        assert 1 <= announced <= 3
        decisions += announced == 1
        hit = one_by_one.process(frame)
        if hit is not None:
            assert announced == 1, "a hit in a frame the detector did not announce"
            hits.append(hit)
    assert len(hits) == 1
    assert decisions >= len(frames) // 3 - 1  # a decision every 30 ms (stride 3)

    batched = MicroWakeWordDetector(("okay_nabu",), None, 2.0)
    batch_hits: list[tuple[WakeHit, bool]] = []
    index = 0
    while index < len(frames):
        batch = frames[index : index + batched.frames_to_decision()]
        for position, frame in enumerate(batch):
            hit = batched.process(frame)
            if hit is not None:
                batch_hits.append((hit, position == len(batch) - 1))
        index += len(batch)
    assert [hit for hit, _ in batch_hits] == hits
    assert all(last for _, last in batch_hits)  # in the last frame of its batch


@pytest.mark.usefixtures("need_espeak")
def test_the_pipeline_batches_only_while_idle() -> None:
    scene = synth.wake_scene("turn on the kitchen light", "en-us", 150)
    pipeline = build_pipeline(Config())
    samples = synth.to_chunk(np.concatenate([scene.audio, synth.silence(3.0)])).samples
    allowed: list[tuple[float, int]] = []
    woke_at: float | None = None
    idle_again_at: float | None = None
    for offset in range(0, len(samples), FRAME_BYTES):
        frame = AudioChunk(16000, 2, 1, samples[offset : offset + FRAME_BYTES], offset / 32000)
        allowed.append((frame.timestamp_seconds, pipeline.idle_frames()))
        events = pipeline.process(frame)
        for event in events:
            if isinstance(event, WakeDetected):
                woke_at = event.timestamp_seconds
            elif woke_at is not None and getattr(event, "state", None) == "idle":
                idle_again_at = event.timestamp_seconds
    assert woke_at is not None and idle_again_at is not None
    before = [n for t, n in allowed if t < woke_at - 0.01]
    during = [n for t, n in allowed if woke_at + 0.005 < t < idle_again_at - 0.005]
    after = [n for t, n in allowed if t > idle_again_at + 0.005]
    assert max(before) == 3 and min(before) >= 1
    assert set(during) == {1}  # listening: every frame as it comes
    assert max(after) == 3


class _GatedPcm:
    """A microphone that captures a 10 ms period only when the test lets it (no sound
    card here gives periods in real time)."""

    def __init__(self) -> None:
        self.gate = threading.Semaphore(0)
        self.reads = 0

    def read(self) -> tuple[int, bytes]:
        self.gate.acquire()
        self.reads += 1
        return 160, bytes([self.reads % 256]) * FRAME_BYTES

    def close(self) -> None:
        """Nothing to release."""


def _periods(chunk: AudioChunk) -> list[int]:
    """Which captured periods a chunk holds (each period's bytes are its number)."""
    return [chunk.samples[i] for i in range(0, len(chunk.samples), FRAME_BYTES)]


def test_the_microphone_hands_over_as_many_periods_as_the_idle_loop_takes() -> None:
    pcm = _GatedPcm()
    source = AlsaCaptureSource("fake", max_seconds=0.2, pcm=pcm)
    chunks = source.cadenced(lambda: 3)
    pcm.gate.release()
    assert _periods(next(chunks)) == [1]  # before the loop said anything: as it comes
    taken: list[AudioChunk] = []
    loop = threading.Thread(target=lambda: taken.append(next(chunks)))
    loop.start()
    while source.periods_at_once != 3:  # the loop is done with the first chunk
        time.sleep(0.001)
    for _ in range(3):
        pcm.gate.release()
    loop.join(5)
    assert [_periods(c) for c in taken] == [[2, 3, 4]]
    assert taken[0].timestamp_seconds == pytest.approx(0.01)
    # a command for the loop: the next period goes at once, not after three
    source.nudge.set()
    pcm.gate.release()
    assert _periods(next(chunks)) == [5]
    for _ in range(20):
        pcm.gate.release()
    rest = list(chunks)
    source.close()
    assert [p for c in rest for p in _periods(c)] == list(range(6, 21))  # nothing lost
    assert all(len(_periods(c)) <= 3 for c in rest)


class _Published:
    """Stands in for the MQTT link: keeps the events."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish_event(self, event: Event) -> None:
        self.events.append(event)

    def publish(self, path: str, payload: bytes, qos: int) -> None:
        """Raw publishes (say/done) are not looked at here."""


@pytest.mark.usefixtures("need_espeak")
def test_the_app_batches_only_while_nothing_is_said_or_awaited() -> None:
    pipeline = build_pipeline(Config())
    silence = synth.to_chunk(synth.silence(1.0)).samples
    offset = 0
    while pipeline.idle_frames() != 3:  # up to a frame right after a decision
        pipeline.process(AudioChunk(16000, 2, 1, silence[offset : offset + FRAME_BYTES]))
        offset += FRAME_BYTES
    link, dialogue = _Published(), Dialogue()
    inbox: queue.Queue[Command] = queue.Queue()
    speaker = PacedSink(NullSink(), ReplayClock(), 22050)  # plays as long as a sound card
    app = SatelliteApp(
        pipeline, link, inbox, EspeakEngine(), speaker, link.publish, None, None, None, dialogue
    )

    try:
        assert app.frames_per_wake() == 3
        dialogue.handle(IntentResult("HassTurnOn", {"name": "kitchen light"}), "u1", 0.0)
        assert app.frames_per_wake() == 1  # Home Assistant's answer is awaited
        app.handle(SpokenResponse("u1", "Turned on the kitchen light."))
        assert app.frames_per_wake() == 1  # being said
        deadline = time.monotonic() + 10
        while app.frames_per_wake() != 3 and time.monotonic() < deadline:
            time.sleep(0.01)
            app.poll()
        assert app.frames_per_wake() == 3  # said, and nothing else to do
        assert "responding" in [e.state for e in link.events if isinstance(e, StateChanged)]
        app.handle(Control("mute"))
        assert app.frames_per_wake() == MUTED_FRAMES_AT_ONCE
    finally:
        app.close()
