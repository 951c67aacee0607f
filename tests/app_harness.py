"""The app with a dialogue, on a test's pipeline, keeping what it publishes and does."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterable, Iterator

from satellite.actions import Action
from satellite.app import SatelliteApp
from satellite.app_enrol import EnrolPlace
from satellite.audio.chunk import AudioChunk
from satellite.audio.io import NullSink
from satellite.config import Config
from satellite.events import Event
from satellite.mqtt.payloads import Command
from satellite.pipeline import Pipeline, build_pipeline
from satellite.tts.espeak import EspeakEngine
from satellite.understanding import Understanding
from satellite.understanding.dialogue import Dialogue
from tests import synth


class Published:
    """The app's event sink: keeps what it publishes."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish_event(self, event: Event) -> None:
        self.events.append(event)


def dialogue_app(
    pipeline: Pipeline, dialogue: Dialogue | None = None, enrol_place: EnrolPlace | None = None
) -> tuple[SatelliteApp, Published, list[Action]]:
    """The app on ``pipeline`` with ``dialogue`` (a new one by default), speaking with
    eSpeak NG into no output (offering enrolment by voice into ``enrol_place``): the app,
    what it publishes and what it does."""
    published, done = Published(), list[Action]()
    inbox: queue.Queue[Command] = queue.Queue()
    app = SatelliteApp(
        pipeline,
        published,
        inbox,
        EspeakEngine(),
        NullSink(),
        lambda *_: None,
        dialogue=dialogue if dialogue is not None else Dialogue(),
        on_action=done.append,
        enrol_place=enrol_place,
    )
    return app, published, done


def after_it_speaks(app: SatelliteApp, chunks: Iterable[AudioChunk]) -> Iterator[AudioChunk]:
    """``chunks`` handed to ``app.run`` one by one, each only once the satellite is not
    speaking: a person who answers after its question. Fed as fast as the loop takes
    them, the frames would otherwise race the voice's thread, and how much of the audio
    after a question the loop heard while the question played (its microphone shut)
    would depend on the machine's load."""
    for chunk in chunks:
        while not app.voice.idle():
            time.sleep(0.005)
        yield chunk


def converse(
    config: Config, understanding: Understanding, audio: synth.Float
) -> tuple[Published, list[Action]]:
    """``audio`` heard by the app with a dialogue (sharing ``understanding``'s help
    question), each chunk once it is not speaking: what it published and did."""
    pipeline = build_pipeline(config, understanding=understanding)
    app, published, done = dialogue_app(pipeline, Dialogue(question=understanding.question))
    try:
        app.run(after_it_speaks(app, synth.mic_chunks(audio)))
    finally:
        app.close()
    return published, done
