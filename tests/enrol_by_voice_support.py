"""Enrolment by voice as a person does it: the app with the real pipeline and
recognizer, eSpeak NG saying the prompts into no output, and a person (a corpus voice, in
a quiet, reverberant or noisy room) saying each prompt back once the satellite listens. Shared
by tests/test_enrol_by_voice.py and bench/enrol_by_voice.py."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from satellite.actions import Action
from satellite.app import SatelliteApp
from satellite.app_enrol import EnrolPlace
from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.enrol.prompted import spoken_prompts
from satellite.events import EnrolmentChanged, Event, StateChanged
from satellite.mqtt.payloads import EnrolRequest
from satellite.pipeline import build_pipeline
from satellite.understanding import build_understanding
from satellite.understanding.dialogue import Dialogue
from tests import corpus, synth
from tests.app_harness import Published, dialogue_app
from tests.understand import FLOOR_RMS

#: The room heard before the enrolment is asked for, s (a satellite that has been running).
ROOM_SECONDS = 3.0
#: The noise of a noisy room, looped, s.
BED_SECONDS = 60.0
#: The most audio a run may take, s (a loop that never ends fails instead of hanging).
LONGEST_SECONDS = 600.0
QUIET = corpus.Room("clean")
#: What the person says for a prompt (its event), or None: the prompt itself.
Answer = Callable[[EnrolmentChanged], str | None]


def enrol_app(
    config: Config, place: EnrolPlace, continuous: bool = False
) -> tuple[SatelliteApp, Published, list[Action]]:
    """The app with a dialogue, offering enrolment by voice into ``place`` (``continuous``:
    listening on, no wake word): the app, what it publishes and what it does."""
    understanding = build_understanding(config, use_llm=False)
    pipeline = build_pipeline(config, continuous=continuous, understanding=understanding)
    return dialogue_app(pipeline, Dialogue(question=understanding.question), place)


def listening_since(events: list[Event]) -> bool:
    """Whether the satellite has begun listening (having said what it asked)."""
    return any(isinstance(e, StateChanged) and e.state == "listening" for e in events)


def person(
    app: SatelliteApp,
    published: Published,
    request: EnrolRequest,
    voice: corpus.Voice,
    room: corpus.Room,
    answer: Answer,
) -> Iterator[AudioChunk]:
    """The microphone: the room for ``ROOM_SECONDS``, then ``request``, and the person
    saying each prompt back (``answer``) once the satellite listens, until it has ended.
    A noisy room's noise goes on all along, ``room.snr_db`` below the person's speech."""
    answered = 0
    at = 0.0
    bed = _noise_bed(voice, room)
    while at < LONGEST_SECONDS:
        if at >= ROOM_SECONDS and not app.handled:
            app.inbox.put(request)
        while not app.voice.idle():
            time.sleep(0.005)
        steps = [e for e in published.events if isinstance(e, EnrolmentChanged)]
        last = steps[-1] if steps else None
        if last is not None and last.state not in ("prompting", "adapting"):
            return
        audio = synth.silence(0.1)
        if last is not None and last.state == "prompting" and len(steps) > answered:
            if not listening_since(published.events[published.events.index(last) :]):
                audio = synth.silence(0.01)  # the prompt is still to be said
            else:
                answered = len(steps)
                said = corpus.speak(voice, answer(last) or last.sentence)
                audio = np.concatenate([synth.silence(0.5), said, synth.silence(1.5)])
                if bed is None:  # (a quiet or reverberant room)
                    audio = corpus.in_room(audio, room, answered, reference=said)
        audio = audio + synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed=answered)
        if bed is not None:
            start = round(at * synth.RATE) % (len(bed) - len(audio))
            audio = audio + bed[start : start + len(audio)]
        for chunk in synth.mic_chunks(audio):
            yield AudioChunk.from_int16(chunk.to_int16(), timestamp_seconds=at)
            at += chunk.seconds
    raise AssertionError("the enrolment did not end")


def _noise_bed(voice: corpus.Voice, room: corpus.Room) -> synth.Float | None:
    """A noisy room's noise for the whole session (looped), None in a quiet one."""
    if room.snr_db is None:
        return None
    level = synth.active_rms(corpus.speak(voice, spoken_prompts(1)[0]))
    return corpus.noise_of(room, round(BED_SECONDS * synth.RATE), 0, level)


def enrol_by_voice(
    config: Config,
    speakers_dir: Path,
    request: EnrolRequest,
    voice: corpus.Voice,
    room: corpus.Room = QUIET,
    answer: Answer = lambda _: None,
    raw: bool = True,
) -> tuple[Published, list[Action], float]:
    """``request`` carried out by the app, ``voice`` answering in ``room`` (``raw``:
    ``EnrolPlace.raw_takes``): what it
    published and did, and when it ended (its last ``enrolment`` event, audio seconds,
    the room's ``ROOM_SECONDS`` before it included)."""
    place = EnrolPlace(str(speakers_dir), raw_takes=raw)
    app, published, done = enrol_app(config, place)
    chunks = person(app, published, request, voice, room, answer)
    try:
        app.run(chunks)
    finally:
        app.close()
    ended = [e.timestamp_seconds for e in published.events if isinstance(e, EnrolmentChanged)]
    return published, done, max(ended, default=0.0)
