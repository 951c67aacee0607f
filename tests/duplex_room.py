"""The satellite replying in a simulated room while a person may talk over it: the real
frame loop (echo cancellation on), the satellite's own eSpeak NG voice, tests/room.py.

Shared by tests/test_duplex_talk_over.py and bench/duplex.py (``--talk-over``). The
player is stopped ``STOP_SECONDS`` after the loop asks (a ``ReplyPaused`` or a
``StopSaid``): what it had played still rings in the room.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from satellite.actions import Action, ReplyPaused, StopSaid
from satellite.audio.chunk import PIPELINE_RATE_HZ, AudioChunk, resample
from satellite.events import Event
from satellite.frontend.echo import EchoStage
from satellite.pipeline import Pipeline
from satellite.tts.espeak import EspeakEngine
from tests.room import Float, Room, level_db, scale_to
from tests.synth import trim

RATE = PIPELINE_RATE_HZ
FRAME = 160
REPLY_LEVEL_DB = 20 * np.log10(3000.0)
#: What the reference is placed early by (the latency is only known roughly), samples.
EARLY = 40
#: From the loop's asking to the player's silence (its buffer stops within 100 ms), s.
STOP_SECONDS = 0.05


def reply_audio(text: str) -> Float:
    """The satellite's own voice (its engine, 22.05 kHz) at 16 kHz, at a speaker level."""
    chunks = list(EspeakEngine().synthesize(text))
    audio = np.concatenate([c.to_int16() for c in chunks]).astype(np.float32)
    at_16k: Float = resample(audio, chunks[0].rate_hz, RATE).astype(np.float64)
    return scale_to(at_16k, REPLY_LEVEL_DB)


@dataclass
class Turn:
    """One reply through the room: what the loop did and where the person spoke."""

    events: list[Event] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    #: When the loop asked the player to stop (s into the reply), and why.
    stopped_at: float | None = None
    paused: bool = False
    #: Where the person's speech was, s into the reply.
    person: tuple[float, float] | None = None


class Replying:
    """The satellite speaking reply after reply in one room, through the real loop."""

    def __init__(self, pipeline: Pipeline, room: Room, seed: int = 0) -> None:
        pipeline.reset()
        assert isinstance(pipeline.stages.echo, EchoStage)
        pipeline.stages.echo.reset()  # a new room: nothing learnt yet
        if pipeline.stages.stop_words is not None:
            pipeline.stages.stop_words.reset()
        if pipeline.stages.talk_over is not None:
            pipeline.stages.talk_over.reset()
        self.pipeline = pipeline
        self.echo = pipeline.stages.echo
        self.room = room
        self.rng = np.random.default_rng(seed)
        self.position = max(0, self.echo.reference.last_played) + RATE

    def hear(self, person: Float, level_below_db: float = 6.0) -> Turn:
        """Nothing playing: ``person`` (``level_below_db`` under a reply's level) and
        the room's noise, through the loop."""
        turn = Turn()
        length = (len(person) // FRAME + 1) * FRAME
        heard = np.zeros(length)
        heard[: len(person)] = scale_to(person, REPLY_LEVEL_DB - level_below_db)
        heard += self.rng.standard_normal(length) * 10 ** ((REPLY_LEVEL_DB - 30) / 20)
        samples = np.clip(np.round(heard), -32768, 32767).astype("<i2").tobytes()
        turn.events = self.pipeline.process(AudioChunk(RATE, 2, 1, samples, self.position / RATE))
        turn.actions = self.pipeline.take_actions()
        self.position += length
        return turn

    def reply(
        self,
        reply: Float,
        person: Float | None = None,
        at_seconds: float = 0.0,
        after_seconds: float = 0.5,
        speaking: bool = True,
    ) -> Turn:
        """``reply`` played (``speaking``: the loop is told), ``person`` (at its level:
        6 dB below the echo) from ``at_seconds``, then ``after_seconds`` more."""
        turn = Turn()
        total = max(len(reply), int(at_seconds * RATE) + (0 if person is None else len(person)))
        length = (total // FRAME + 1) * FRAME + int(after_seconds * RATE)
        played = np.zeros(length)
        played[: len(reply)] = reply
        echo = self.room.echo(played)
        noise = self.rng.standard_normal(length) * 10 ** ((REPLY_LEVEL_DB - 30) / 20)
        near = np.zeros(length)
        if person is not None:
            speech = trim(person.astype(np.float32), float(np.max(np.abs(person))) / 100)
            voice = scale_to(speech.astype(np.float64), level_db(reply) - 6)  # echo 6 dB up
            at = int(at_seconds * RATE)
            near[at : at + len(voice)] = voice
            turn.person = (at / RATE, (at + len(voice)) / RATE)
        shift = int(self.room.delay_ms * RATE / 1000) - EARLY
        reference = np.clip(np.round(played), -32768, 32767).astype(np.int16)
        self.pipeline.set_speaking(speaking)
        stop_sample: int | None = None
        for index in range(length // FRAME):
            piece = slice(index * FRAME, (index + 1) * FRAME)
            start = index * FRAME
            if stop_sample is None or start < stop_sample:  # the player hands it on
                self.echo.reference.push(reference[piece], self.position + shift + start)
            heard = near[piece] + noise[piece] + echo[piece]
            samples = np.clip(np.round(heard), -32768, 32767).astype("<i2").tobytes()
            chunk = AudioChunk(RATE, 2, 1, samples, (self.position + start) / RATE)
            turn.events += self.pipeline.process(chunk)
            actions = self.pipeline.take_actions()
            turn.actions += actions
            if stop_sample is None and any(isinstance(a, ReplyPaused | StopSaid) for a in actions):
                turn.stopped_at = (index + 1) * FRAME / RATE
                turn.paused = any(isinstance(a, ReplyPaused) for a in actions)
                stop_sample = (index + 1) * FRAME + int(STOP_SECONDS * RATE)
                cut = played.copy()
                cut[stop_sample:] = 0.0
                echo = self.room.echo(cut)  # what was played rings on; nothing more
            if speaking and index == len(reply) // FRAME:
                self.pipeline.set_speaking(False)  # the reply has played
            if stop_sample is not None and start >= stop_sample:
                self.pipeline.set_speaking(False)  # the player says it stopped
        self.pipeline.set_speaking(False)
        self.position += length
        return turn


class AddsActions:
    """The real pipeline, plus the actions a test adds (``more``) after its own: how the
    app carries out what the pipeline would ask for."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def __getattr__(self, name: str) -> object:
        return getattr(self.pipeline, name)

    @property
    def hearing(self) -> bool:
        return self.pipeline.hearing

    def take_actions(self) -> list[Action]:
        return [*self.pipeline.take_actions(), *self.more()]

    def more(self) -> list[Action]:
        """What the test adds now."""
        return []
