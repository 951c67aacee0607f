"""The wake word said over a reply, echo cancellation on vs off: does barge-in hear it?

The real frame loop (its default configuration, and with ``frontend.echo.enabled``) in
three simulated rooms (tests/room.py); the satellite's own eSpeak reply 6 dB louder
than the person at the microphone, noise 30 dB below it; every test voice but the
satellite's says "okay nabu" 1.5 s into a reply. With echo on, the canceller has first
heard three replies in the room. Counted: replies the wake word stopped (``BargeIn``),
and apart, replies paused because "okay nabu" was heard as someone speaking over them
(``ReplyPaused``: echo cancellation with hearing while speaking, its default, since
issue 19's talk-over; before it those were counted by neither).

    taskset -c 1 ~/.cache/pocket-satellite/venv/bin/python -m bench.duplex_wake

Writes bench/results/duplex_wake.json and prints a table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.common import print_table, write_results
from satellite.actions import BargeIn, ReplyPaused
from satellite.audio.chunk import AudioChunk, resample
from satellite.config import validate
from satellite.pipeline import Pipeline, build_pipeline
from satellite.tts.espeak import EspeakEngine
from tests import corpus
from tests.room import Float, Room, level_db, scale_to

RATE = 16000
FRAME = 160
REPLY_LEVEL_DB = 20 * np.log10(3000.0)
REPLIES = (
    "The kitchen light is on.",
    "It is twenty past four in the afternoon.",
    "I have called the nurse, someone is coming to help you now.",
    "Your next appointment is on Tuesday at ten in the morning with doctor Smith.",
)
ROOMS = (Room(20, 0.2, seed=1), Room(100, 0.4, seed=2), Room(200, 0.6, seed=3))


def _reply(text: str) -> Float:
    chunks = list(EspeakEngine().synthesize(text))
    audio = np.concatenate([c.to_int16() for c in chunks]).astype(np.float32)
    at_16k: Float = resample(audio, chunks[0].rate_hz, RATE).astype(np.float64)
    return scale_to(at_16k, REPLY_LEVEL_DB)


class Loop:
    """One pipeline speaking in one room; the echo stage (if any) gets what played."""

    def __init__(self, pipeline: Pipeline, room: Room, seed: int) -> None:
        pipeline.reset()
        self.pipeline, self.room = pipeline, room
        self.rng = np.random.default_rng(seed)
        echo = pipeline.stages.echo
        self.position = 0 if echo is None else max(0, echo.reference.last_played) + RATE
        if echo is not None:
            echo.reset()

    def reply(self, reply: Float, person: Float | None = None) -> str:
        """What stopped ``reply``: ``"barge_in"`` (the wake word), ``"paused"``
        (speech over it) or ``""`` (nothing)."""
        played = np.concatenate([reply, np.zeros(RATE // 2)])
        echo = self.room.echo(played)
        noise = self.rng.standard_normal(len(played)) * 10 ** ((REPLY_LEVEL_DB - 30) / 20)
        near = np.zeros(len(played))
        if person is not None:
            voice = scale_to(person, level_db(reply) - 6)
            at = int(1.5 * RATE)
            near[at : at + len(voice)] = voice[: len(played) - at]
        reference = np.clip(np.round(reply), -32768, 32767).astype(np.int16)
        shift = int(self.room.delay_ms * RATE / 1000) - 40
        stage = self.pipeline.stages.echo
        self.pipeline.set_speaking(True)
        stopped = ""
        for index in range(len(played) // FRAME):
            piece = slice(index * FRAME, (index + 1) * FRAME)
            if stage is not None and not stopped:
                stage.reference.push(reference[piece], self.position + shift + index * FRAME)
            heard = near[piece] + noise[piece] + (0.0 if stopped else echo[piece])
            samples = np.clip(np.round(heard), -32768, 32767).astype("<i2").tobytes()
            at_seconds = (self.position + index * FRAME) / RATE
            self.pipeline.process(AudioChunk(RATE, 2, 1, samples, at_seconds))
            for action in self.pipeline.take_actions():
                if isinstance(action, BargeIn | ReplyPaused) and not stopped:
                    stopped = "barge_in" if isinstance(action, BargeIn) else "paused"
        self.pipeline.set_speaking(False)
        self.position += len(played)
        return stopped


def main() -> None:
    replies = [_reply(text) for text in REPLIES]
    people = [v for v in corpus.available(corpus.VOICES_ALL) if v.label != "espeak/en-us@160"]
    pipelines = {
        "off": build_pipeline(validate({})),
        "on": build_pipeline(validate({"frontend": {"echo": {"enabled": True}}})),
    }
    rows: list[dict[str, Any]] = []
    for number, room in enumerate(ROOMS):
        row: dict[str, Any] = {"delay_ms": room.delay_ms, "rt60_s": room.rt60_seconds}
        for name, pipeline in pipelines.items():
            loop = Loop(pipeline, room, seed=number)
            for reply in replies[:3]:
                loop.reply(reply)  # the canceller learns the room
            said = [corpus.speak(v, "okay nabu").astype(np.float64) for v in people]
            stops = [loop.reply(replies[3], s) for s in said]
            row[f"echo_{name}_barge_ins"] = stops.count("barge_in")
            row[f"echo_{name}_paused"] = stops.count("paused")
        row["said"] = len(people)
        rows.append(row)
        print(f"room {number + 1}/{len(ROOMS)} done", flush=True)
    write_results("duplex_wake", {"people": [v.label for v in people], "rooms": rows})
    print_table(list(rows[0]), [list(r.values()) for r in rows])


if __name__ == "__main__":
    main()
