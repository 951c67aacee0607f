"""Barge-in on real audio: the wake word over the satellite's own voice stops it.

The microphone hears a person plus the echo of the satellite's reply (eSpeak NG through
our engine, attenuated as a loudspeaker a little way off would be). The frame loop runs
synchronously on 10 ms frames; on ``BargeIn`` the test stops the speaker and the echo
ends, as it would once the player stops.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from satellite.actions import Action, BargeIn
from satellite.audio.chunk import AudioChunk, resample
from satellite.audio.events import PlaybackStopped
from satellite.audio.player import Player
from satellite.audio.settings import PlayerSettings
from satellite.config import Config
from satellite.events import Event, SpeechStarted, StateChanged, UtteranceEnded, WakeDetected
from satellite.pipeline import Pipeline, build_pipeline
from satellite.tts.espeak import EspeakEngine
from satellite.tts.speaker import Speaker
from tests import synth

pytestmark = pytest.mark.usefixtures("need_espeak")

REPLY = (
    "Here is the weather for today. It will be cloudy in the morning, with sunny "
    "spells in the afternoon and a light breeze from the west. Tonight will be dry."
)
#: The echo of the loudspeaker at the microphone, relative to the synthesised level.
ECHO_GAIN = 0.25
FRAME = 160
TOLERANCE_SECONDS = 0.2


def _own_voice(seconds: float) -> synth.Float:
    """The satellite's reply as the microphone hears it, at 16 kHz, ``seconds`` long."""
    chunks = list(EspeakEngine().synthesize(REPLY))
    audio = np.concatenate([c.to_int16() for c in chunks]).astype(np.float32)
    echo = resample(audio, chunks[0].rate_hz, synth.RATE) * ECHO_GAIN
    repeats = int(np.ceil(seconds * synth.RATE / len(echo)))
    return np.tile(echo, repeats)[: int(seconds * synth.RATE)]


def _run(
    pipeline: Pipeline,
    person: synth.Float,
    echo: synth.Float,
    on_barge_in: threading.Event | None = None,
) -> list[Event | Action]:
    """The pipeline's events and actions, a frame's actions (decided first) before its
    events."""
    events: list[Event | Action] = []
    stopped = False
    for start in range(0, len(person) - FRAME + 1, FRAME):
        frame = person[start : start + FRAME] + (0.0 if stopped else echo[start : start + FRAME])
        samples = synth.to_chunk(frame).samples
        heard = pipeline.process(AudioChunk(synth.RATE, 2, 1, samples, start / synth.RATE))
        new: list[Event | Action] = [*pipeline.take_actions(), *heard]
        events += new
        if any(isinstance(e, BargeIn) for e in new):
            stopped = True
            if on_barge_in is not None:
                on_barge_in.set()
    return events


def test_the_wake_word_over_the_satellites_voice_stops_it_and_listens() -> None:
    scene = synth.wake_scene("turn on the kitchen light", "en-us", 150)
    pipeline = build_pipeline(Config())
    pipeline.set_speaking(True)
    events = _run(pipeline, scene.audio, _own_voice(len(scene.audio) / synth.RATE))
    # the front end's events, in order (later stages, e.g. prosody, may add their own)
    kinds = (BargeIn, WakeDetected, StateChanged, SpeechStarted, UtteranceEnded)
    events = [e for e in events if isinstance(e, kinds)]
    assert [type(e).__name__ for e in events] == [
        "BargeIn",
        "WakeDetected",
        "StateChanged",
        "SpeechStarted",
        "UtteranceEnded",
        "StateChanged",
    ]
    barge_in, wake = events[0], events[1]
    assert isinstance(barge_in, BargeIn)
    assert isinstance(wake, WakeDetected)
    assert barge_in.wake_word == wake.wake_word
    assert barge_in.timestamp_seconds == wake.timestamp_seconds
    assert not pipeline.speaking
    utterance = events[4]
    assert isinstance(utterance, UtteranceEnded)
    assert abs(utterance.start_seconds - scene.command_start_seconds) <= TOLERANCE_SECONDS
    assert abs(utterance.end_seconds - scene.command_end_seconds) <= TOLERANCE_SECONDS


def test_the_microphone_ignores_the_satellites_own_voice() -> None:
    echo = np.concatenate([_own_voice(4.0) / ECHO_GAIN, synth.silence(1.5)])  # a person's level
    silence = np.zeros_like(echo)
    speaking = build_pipeline(Config(), continuous=True)
    speaking.set_speaking(True)
    assert _run(speaking, silence, echo) == []
    heard = _run(build_pipeline(Config(), continuous=True), silence, echo)
    assert any(isinstance(e, SpeechStarted) for e in heard)  # the control: it is speech
    assert any(isinstance(e, UtteranceEnded) for e in heard)


def test_no_barge_in_when_not_speaking() -> None:
    scene = synth.wake_scene("what time is it", "en-us", 150)
    pipeline = build_pipeline(Config())
    events = _run(pipeline, scene.audio, np.zeros_like(scene.audio))
    assert not any(isinstance(e, BargeIn) for e in events)
    assert any(isinstance(e, WakeDetected) for e in events)
    assert [e.state for e in events if isinstance(e, StateChanged)] == ["listening", "idle"]


class _SlowSink:
    """Holds playback after the first audio, like a device playing in real time."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def write(self, chunk: AudioChunk) -> None:
        self.started.set()
        assert self.release.wait(20.0)

    def close(self) -> None:
        pass


def test_barge_in_stops_the_speaker() -> None:
    events: list[Event] = []
    sink = _SlowSink()
    player = Player(sink, PlayerSettings(), on_event=events.append)
    speaker = Speaker(EspeakEngine(), player)
    reply = speaker.say(REPLY)
    assert sink.started.wait(20.0)
    barge_in = threading.Event()
    scene = synth.wake_scene("stop", "en-us", 150)
    pipeline = build_pipeline(Config())
    pipeline.set_speaking(True)
    stopper = threading.Thread(target=lambda: barge_in.wait(60.0) and speaker.stop())
    stopper.start()
    _run(pipeline, scene.audio, _own_voice(len(scene.audio) / synth.RATE), barge_in)
    assert barge_in.is_set()
    assert reply.wait(20.0)
    sink.release.set()
    stopper.join(20.0)
    assert player.wait(20.0)
    assert reply.cancelled
    assert isinstance(events[-1], PlaybackStopped)
    speaker.close()
    player.close()
