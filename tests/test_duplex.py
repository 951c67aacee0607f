"""Hearing "stop" while the satellite speaks (issue 19, item 2).

The real frame loop with echo cancellation on: the satellite's own replies (its eSpeak
NG engine) reach the microphone through a simulated room (tests/room.py), 6 dB louder
than a person, with noise; the echo stage gets what was played as the echo tap would
give it. A person's "stop" over a reply stops it; the replies alone never do.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from satellite.actions import Action, StopSaid
from satellite.app import SatelliteApp
from satellite.audio.chunk import PIPELINE_RATE_HZ, AudioChunk, resample
from satellite.audio.io import NullSink
from satellite.config import Config, validate
from satellite.config_base import ConfigError
from satellite.errors import SatelliteError
from satellite.events import Event, StateChanged, WakeDetected
from satellite.frontend.echo import EchoStage
from satellite.mqtt.payloads import Command, SayRequest
from satellite.pipeline import Pipeline, build_pipeline
from satellite.stt.keywords import DoubleTalkGate, StopWordSpotter
from satellite.tts.espeak import EspeakEngine
from tests import corpus, synth
from tests.duplex_room import AddsActions
from tests.room import Float, Room, level_db, scale_to

pytestmark = pytest.mark.usefixtures("need_espeak")
RATE = PIPELINE_RATE_HZ
FRAME = 160
REPLIES = (
    "The kitchen light is on.",
    "It is twenty past four in the afternoon.",
    "I have called the nurse, someone is coming to help you now.",
    "Your next appointment is on Tuesday at ten in the morning with doctor Smith.",
    "Say stop, or cancel, whenever you want me to stop talking.",  # its own stop words
)
REPLY_LEVEL_DB = 20 * np.log10(3000.0)
SAMPLE = Path("satellite") / "data" / "sample.wav"
#: What the reference is placed early by (the latency is only known roughly), samples.
EARLY = 40


@dataclass
class Heard:
    """A reply through the room: when the loop stopped it (s into the reply, or None)
    and where the person's word was."""

    stopped_at: float | None
    word: tuple[float, float] | None


def _reply(text: str) -> Float:
    """The satellite's own voice (its engine, 22.05 kHz) at 16 kHz, at a speaker level."""
    chunks = list(EspeakEngine().synthesize(text))
    audio = np.concatenate([c.to_int16() for c in chunks]).astype(np.float32)
    at_16k: Float = resample(audio, chunks[0].rate_hz, RATE).astype(np.float64)
    return scale_to(at_16k, REPLY_LEVEL_DB)


@pytest.fixture(scope="module")
def replies() -> list[Float]:
    return [_reply(text) for text in REPLIES]


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return build_pipeline(validate({"frontend": {"echo": {"enabled": True}}}))


class Speaking:
    """The satellite speaking reply after reply in one room, through the real loop."""

    def __init__(self, pipeline: Pipeline, room: Room, seed: int = 0) -> None:
        pipeline.reset()
        assert isinstance(pipeline.stages.echo, EchoStage)
        pipeline.stages.echo.reset()  # a new room: nothing learnt yet
        assert pipeline.stages.stop_words is not None
        pipeline.stages.stop_words.reset()
        self.pipeline = pipeline
        self.echo = pipeline.stages.echo
        self.room = room
        self.rng = np.random.default_rng(seed)
        # microphone samples so far: on from what the stage was given before
        self.position = max(0, self.echo.reference.last_played) + RATE

    def reply(self, reply: Float, person: Float | None = None, at_seconds: float = 0.0) -> Heard:
        played = np.concatenate([reply, np.zeros(RATE // 2)])
        echo = self.room.echo(played)
        noise = self.rng.standard_normal(len(played)) * 10 ** ((REPLY_LEVEL_DB - 30) / 20)
        near = np.zeros(len(played))
        word = None
        if person is not None:
            voice = scale_to(person, level_db(reply) - 6)  # the echo 6 dB louder
            at = int(at_seconds * RATE)
            near[at : at + len(voice)] = voice
            word = (at / RATE, (at + len(voice)) / RATE)
        shift = int(self.room.delay_ms * RATE / 1000) - EARLY
        reference = np.clip(np.round(reply), -32768, 32767).astype(np.int16)
        self.pipeline.set_speaking(True)
        stopped_at: float | None = None
        for index in range(len(played) // FRAME):
            piece = slice(index * FRAME, (index + 1) * FRAME)
            if not stopped_at:  # the player hands the card 10 ms at a time, as it plays
                at = self.position + shift + index * FRAME
                self.echo.reference.push(reference[piece], at)
            heard = near[piece] + noise[piece] + (0.0 if stopped_at else echo[piece])
            samples = np.clip(np.round(heard), -32768, 32767).astype("<i2").tobytes()
            chunk = AudioChunk(RATE, 2, 1, samples, (self.position + index * FRAME) / RATE)
            self.pipeline.process(chunk)
            if any(isinstance(a, StopSaid) for a in self.pipeline.take_actions()):
                stopped_at = (index + 1) * FRAME / RATE  # the player stops: the echo ends
            if index == len(reply) // FRAME:
                self.pipeline.set_speaking(False)  # the reply has played
        self.pipeline.set_speaking(False)
        self.position += len(played)
        return Heard(stopped_at, word)


def test_the_satellites_own_replies_never_stop_it(pipeline: Pipeline, replies: list[Float]) -> None:
    for number, room in enumerate((Room(20, 0.2, seed=1), Room(200, 0.6, seed=2))):
        speaking = Speaking(pipeline, room, seed=number)
        for reply in replies + replies[:2]:  # the first ones while the canceller learns
            assert speaking.reply(reply).stopped_at is None


@pytest.mark.parametrize(
    "voice",
    [
        corpus.Voice("espeak", "en-us+f3", 140),
        corpus.Voice("flite", "slt", 1.0),
        corpus.Voice("festival", "kal_diphone", 1.0),
    ],
    ids=lambda v: v.label,
)
def test_stop_said_over_a_reply_stops_it_within_300_ms(
    pipeline: Pipeline, replies: list[Float], voice: corpus.Voice
) -> None:
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed (scripts/bootstrap.sh)")
    speaking = Speaking(pipeline, Room(100, 0.4, seed=3))
    for reply in replies[:2]:  # the canceller learns the room
        assert speaking.reply(reply).stopped_at is None
    said = corpus.speak(voice, "stop").astype(np.float64)
    heard = speaking.reply(replies[3], said, at_seconds=1.5)
    assert heard.stopped_at is not None and heard.word is not None
    assert heard.stopped_at > heard.word[0]  # it was the person, not the reply
    assert heard.stopped_at - heard.word[1] <= 0.3


def test_a_stop_said_after_the_reply_is_not_taken_for_one(
    pipeline: Pipeline, replies: list[Float]
) -> None:
    """Not speaking: the check does not search (a wake word is needed again)."""
    speaking = Speaking(pipeline, Room(60, 0.3, seed=4))
    speaking.reply(replies[0])
    said = corpus.speak(corpus.Voice("espeak", "en-us+f3", 140), "stop").astype(np.float64)
    quiet = np.zeros(2 * RATE)
    quiet[RATE // 2 : RATE // 2 + len(said)] = scale_to(said, REPLY_LEVEL_DB - 6)
    samples = quiet.astype("<i2").tobytes()
    pipeline.process(AudioChunk(RATE, 2, 1, samples, speaking.position / RATE))
    assert not [a for a in pipeline.take_actions() if isinstance(a, StopSaid)]


def test_a_canceller_that_failed_starts_the_gate_again(
    pipeline: Pipeline, replies: list[Float]
) -> None:
    """The supervisor resets a failed canceller: it has to learn the room again, so the
    gate must not judge what it leaves by what it took out before."""
    speaking = Speaking(pipeline, Room(60, 0.3, seed=5))
    speaking.reply(replies[1])
    spotter, echo = pipeline.stages.stop_words, pipeline.stages.echo
    assert spotter is not None and echo is not None
    assert spotter.gate.excess_db() is not None
    echo.canceller.close()  # a real fault: the next frame raises, the stage is reset
    at = speaking.position
    echo.reference.push(np.full(FRAME, 1000, np.int16), at)  # something plays
    pipeline.process(AudioChunk(RATE, 2, 1, bytes(2 * FRAME), at / RATE))
    assert pipeline.errors_by_stage["echo"] == 1
    assert spotter.gate.excess_db() is None  # nothing passes until it has learnt again
    speaking.position += FRAME
    speaking.reply(replies[0])
    assert echo.frames_cancelled > 0 and pipeline.errors_by_stage["echo"] == 1


def test_with_echo_off_nothing_listens_while_speaking() -> None:
    assert build_pipeline(Config()).stages.stop_words is None
    off = validate({"frontend": {"echo": {"enabled": True, "hear_while_speaking": False}}})
    assert build_pipeline(off).stages.stop_words is None


def test_the_gate_lets_through_only_what_the_canceller_did_not_leave() -> None:
    """Speech with pauses, 20 dB of its echo taken out: more of the same (the satellite's
    voice) does not pass; someone 6 dB below the echo, whom it does not take out, does."""
    gate = DoubleTalkGate()
    rng = np.random.default_rng(0)
    quiet = (rng.standard_normal(160) * 30).astype("<i2")  # the room between words

    def frames(count: int, person: float = 0.0) -> None:
        for index in range(count):
            if index % 5 == 4:
                gate.add(quiet.tobytes(), quiet.tobytes())
                continue
            echo = rng.standard_normal(160) * 3000
            near = rng.standard_normal(160) * 3000 * person
            gate.add(
                (echo + near).astype("<i2").tobytes(), (echo / 10 + near).astype("<i2").tobytes()
            )

    assert gate.excess_db() is None  # nothing heard yet: nothing can pass
    frames(200)
    excess = gate.excess_db()
    assert excess is not None and abs(excess) < 1.5, excess
    frames(50, person=0.5)
    excess = gate.excess_db()
    assert excess is not None and excess > 10.0, excess  # the window holds the person alone


def test_words_not_in_the_dictionary_are_refused_with_a_fix() -> None:
    with pytest.raises(SatelliteError, match=r"zzyzxq not in the pronunciation dictionary\. Fix"):
        StopWordSpotter(("stop", "zzyzxq"), 8.0)
    with pytest.raises(ConfigError, match=r"frontend\.echo\.stop_words.*non-empty list"):
        validate({"frontend": {"echo": {"stop_words": []}}})


class StopsWhenSpeaking(AddsActions):
    """The real pipeline, plus a stop word heard as soon as the satellite speaks: how the
    app carries out ``StopSaid`` (the pipeline's side is tested above)."""

    def __init__(self, pipeline: Pipeline) -> None:
        super().__init__(pipeline)
        self.said = False

    def more(self) -> list[Action]:
        if self.pipeline.speaking and not self.said:
            self.said = True
            return [StopSaid(0.0, word="stop")]
        return []


class Published:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.raw: queue.Queue[tuple[str, bytes]] = queue.Queue()

    def publish_event(self, event: Event) -> None:
        self.events.append(event)

    def publish(self, path: str, payload: bytes, qos: int) -> None:
        self.raw.put((path, payload))


class PacedSink(NullSink):
    """Takes audio as fast as a sound card plays it."""

    def write(self, chunk: AudioChunk) -> None:
        super().write(chunk)
        time.sleep(chunk.seconds)


@pytest.fixture
def app() -> Iterator[tuple[SatelliteApp, Published]]:
    published = Published()
    inbox: queue.Queue[Command] = queue.Queue()
    stand_in = StopsWhenSpeaking(build_pipeline(Config()))
    application = SatelliteApp(
        stand_in,  # type: ignore[arg-type]
        published,
        inbox,
        EspeakEngine(),
        PacedSink(),
        published.publish,
    )
    yield application, published
    application.close()


def test_a_stop_heard_stops_the_reply_as_the_stop_control_does(
    app: tuple[SatelliteApp, Published],
) -> None:
    application, published = app
    application.handle(SayRequest(" ".join(["counting"] * 300), "long"))  # over a minute

    def microphone() -> Iterator[AudioChunk]:
        for step in range(1000):  # the frame loop runs until the reply is answered
            if not published.raw.empty():
                return
            time.sleep(0.005)
            yield AudioChunk(RATE, 2, 1, bytes(2 * FRAME), step * 0.01)

    application.run(microphone())
    path, payload = published.raw.get(timeout=1.0)
    assert path == "say/done"
    assert b'"stopped"' in payload
    application.poll()
    states = [e.state for e in published.events if isinstance(e, StateChanged)]
    assert "responding" in states and states[-1] == "idle"


def test_with_nothing_played_echo_on_hears_exactly_as_echo_off() -> None:
    """What turning echo cancellation on by default would change for a person speaking
    to a quiet satellite: nothing (the stage passes the microphone through)."""
    sample = synth.wav_to_float((Path(__file__).parent.parent / SAMPLE).read_bytes())
    chunk = synth.to_chunk(sample)
    heard = []
    for data in ({}, {"frontend": {"echo": {"enabled": True}}}):
        pipeline = build_pipeline(validate(data))
        heard.append([*pipeline.process(chunk), *pipeline.end_of_input()])
    assert any(isinstance(e, WakeDetected) for e in heard[0])
    assert heard[0] == heard[1]
