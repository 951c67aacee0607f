"""The satellite process: audio -> Pipeline -> MQTT, and MQTT commands -> frame loop."""

from __future__ import annotations

import contextlib
import io
import json
import queue
import time
import wave
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from satellite.app import SatelliteApp
from satellite.app_contract import make_info
from satellite.audio.chunk import AudioChunk
from satellite.audio.io import NullSink
from satellite.audio.wav import WavFileSource
from satellite.cli import main
from satellite.config import Config
from satellite.events import Event, StateChanged, WakeDetected
from satellite.mqtt.payloads import (
    Command,
    Control,
    PlayRequest,
    SayRequest,
    Slots,
    SpokenResponse,
    TtsRequest,
)
from satellite.mqtt.tts_responder import wav_bytes
from satellite.nlu.recognizer import IntentResult
from satellite.pipeline import Pipeline, build_pipeline
from satellite.tts.base import TtsError
from satellite.tts.espeak import EspeakEngine
from satellite.understanding.dialogue import Dialogue
from tests import synth
from tests.mqtt_support import Probe, have_mosquitto, run_config, running_broker

SAMPLE = Path(__file__).resolve().parent.parent / "satellite" / "data" / "sample.wav"
BASE = "pocket_satellite/pocket_satellite"
pytestmark = pytest.mark.skipif(
    not (have_mosquitto() and synth.have_espeak()), reason="needs mosquitto and espeak-ng"
)


class Recorder:
    """Stands in for the MQTT link: records events and raw publishes."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.raw: queue.Queue[tuple[str, bytes, int]] = queue.Queue()

    def publish_event(self, event: Event) -> None:
        self.events.append(event)

    def publish(self, path: str, payload: bytes, qos: int) -> None:
        self.raw.put((path, payload, qos))

    def states(self) -> list[str]:
        return [e.state for e in self.events if isinstance(e, StateChanged)]


class WritingSink(NullSink):
    """Keeps what was played."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[AudioChunk] = []

    def write(self, chunk: AudioChunk) -> None:
        super().write(chunk)
        self.chunks.append(chunk)


def published(
    application: SatelliteApp, recorder: Recorder, count: int, timeout: float = 30.0
) -> list[tuple[str, bytes, int]]:
    """The next ``count`` raw publishes, polling the app as its frame loop would."""
    got: list[tuple[str, bytes, int]] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        application.poll()
        with contextlib.suppress(queue.Empty):
            got.append(recorder.raw.get(timeout=0.02))
    assert len(got) == count, got
    return got


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return build_pipeline(Config())


@pytest.fixture
def app(pipeline: Pipeline) -> Iterator[tuple[SatelliteApp, Recorder, WritingSink]]:
    pipeline.reset()
    recorder, sink = Recorder(), WritingSink()
    inbox: queue.Queue[Command] = queue.Queue()
    application = SatelliteApp(pipeline, recorder, inbox, EspeakEngine(), sink, recorder.publish)
    yield application, recorder, sink
    application.close()


def test_sample_goes_through_the_pipeline_to_events(
    app: tuple[SatelliteApp, Recorder, WritingSink],
) -> None:
    application, recorder, _ = app
    source = WavFileSource(str(SAMPLE))
    application.run(source)
    source.close()
    assert any(isinstance(e, WakeDetected) for e in recorder.events)
    assert recorder.states() == ["idle", "listening", "idle"]


def test_commands_reach_the_frame_loop(app: tuple[SatelliteApp, Recorder, WritingSink]) -> None:
    application, recorder, sink = app
    application.inbox.put(SayRequest("Dinner is ready", "a1"))
    application.inbox.put(TtsRequest("r1", "The light is on", "en-gb-x-rp"))
    application.inbox.put(Slots(("Kitchen Lights",), ("Kitchen",)))
    application.poll()
    answers = {path: payload for path, payload, _qos in published(application, recorder, 2)}
    assert json.loads(answers["say/done"]) == {"id": "a1", "status": "done", "error": None}
    wav = answers["tts/response/r1"]
    assert wav[:4] == b"RIFF"
    with wave.open(io.BytesIO(wav)) as reader:
        assert reader.getnframes() > reader.getframerate() * 0.5
    assert sink.seconds_written > 0.5
    assert application.slots == Slots(("Kitchen Lights",), ("Kitchen",))
    application.poll()
    assert recorder.states() == ["responding", "idle"]


def test_mute_volume_and_stop(app: tuple[SatelliteApp, Recorder, WritingSink]) -> None:
    application, recorder, sink = app
    application.handle(Control("mute"))
    source = WavFileSource(str(SAMPLE))
    application.run(source)  # muted: the audio is not listened to
    source.close()
    assert not any(isinstance(e, WakeDetected) for e in recorder.events)
    assert recorder.states()[-1] == "muted"
    application.handle(Control("volume", 0.25))
    application.handle(SayRequest("One two three four five six seven", "quiet"))
    published(application, recorder, 1)
    loud = max(abs(int(s)) for c in sink.chunks for s in c.to_int16())
    assert loud < 32768 * 0.3
    application.handle(Control("unmute"))
    assert recorder.states()[-1] == "idle"
    application.handle(SayRequest(" ".join(["counting"] * 200), "long"))
    application.handle(SayRequest("queued", "next"))
    application.handle(Control("stop"))
    statuses = {}
    for _path, payload, _ in published(application, recorder, 2):
        statuses[json.loads(payload)["id"]] = json.loads(payload)["status"]
    assert statuses["next"] == "stopped"
    assert statuses["long"] in ("stopped", "done")


def test_a_wake_word_choice_of_a_model_not_loaded_is_ignored(
    app: tuple[SatelliteApp, Recorder, WritingSink], caplog: pytest.LogCaptureFixture
) -> None:
    application, recorder, _ = app
    application.handle(Control("wake_words", wake_words=("hey_jarvis",)))
    assert "hey_jarvis are not loaded" in caplog.text
    application.handle(Control("wake_words", wake_words=("okay_nabu",)))
    source = WavFileSource(str(SAMPLE))
    application.run(source)  # still listening for okay_nabu
    source.close()
    assert any(isinstance(e, WakeDetected) for e in recorder.events)


def test_an_announcement_with_preannounce_plays_the_chime_first(pipeline: Pipeline) -> None:
    pipeline.reset()
    recorder, sink = Recorder(), WritingSink()
    tone = (np.sign(np.sin(np.arange(8000) * 2 * np.pi * 880 / 16000)) * 9000).astype(np.int16)
    chime = AudioChunk.from_int16(tone)  # 0.5 s
    application = SatelliteApp(
        pipeline,
        recorder,
        queue.Queue(),
        EspeakEngine(),
        sink,
        recorder.publish,
        sounds={"awake": chime},
    )
    try:
        application.handle(SayRequest("Hello there", "plain"))
        published(application, recorder, 1)
        plain_seconds, plain_chunks = sink.seconds_written, len(sink.chunks)
        application.handle(SayRequest("Hello there", "chimed", preannounce=True))
        ((path, payload, _),) = published(application, recorder, 1)
        assert path == "say/done" and json.loads(payload)["status"] == "done"
        chimed_seconds = sink.seconds_written - plain_seconds
        # the 0.5 s chime, and the player's gap between two items
        assert 0.45 <= chimed_seconds - plain_seconds <= 0.75
        after = np.concatenate([c.to_int16() for c in sink.chunks[plain_chunks:]])
        sounding = np.abs(after.astype(np.int32))
        onset = int(np.argmax(sounding > 0))
        rate = sink.chunks[plain_chunks].rate_hz
        # What sounds first is the square-wave chime (loud throughout), not speech.
        assert float(np.mean(sounding[onset : onset + int(0.4 * rate)] > 6000)) > 0.8
    finally:
        application.close()


def test_played_media_is_heard_and_answered_on_say_done(
    app: tuple[SatelliteApp, Recorder, WritingSink],
) -> None:
    application, recorder, sink = app
    tone = (np.sin(np.arange(16000) * 2 * np.pi * 440 / 16000) * 12000).astype(np.int16)
    application.handle(PlayRequest("ann_1", AudioChunk.from_int16(tone)))  # 1 s
    ((path, payload, _),) = published(application, recorder, 1)
    assert (path, json.loads(payload)) == (
        "say/done",
        {"id": "ann_1", "status": "done", "error": None},
    )
    assert sink.seconds_written >= 1.0
    application.poll()
    assert recorder.states() == ["responding", "idle"]  # it counts as the satellite speaking


def test_synthesis_errors_are_answered(app: tuple[SatelliteApp, Recorder, WritingSink]) -> None:
    application, recorder, _ = app
    application.handle(TtsRequest("bad", "hello", "no-such-voice-zz"))
    path, payload, _ = recorder.raw.get(timeout=30)
    assert path == "tts/response/bad"
    error = json.loads(payload)["error"]
    assert json.loads(payload)["id"] == "bad"
    assert "no-such-voice-zz" in error and "Fix:" in error
    with pytest.raises(TtsError):
        wav_bytes([])


def test_info_names_the_wake_words_and_voices() -> None:
    info = make_info(Config(), EspeakEngine())
    assert info.wake_words == ("okay_nabu",)
    assert {"en-us", "en-gb-x-rp"} <= set(info.voices)  # names a tts/request can use
    assert "tts" in info.capabilities


def test_run_command_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "satellite.yaml"
    with running_broker(tmp_path / "broker") as broker:
        config.write_text(run_config(broker.port, tmp_path, 'output: "null"'))
        probe = Probe(broker.port, (f"{BASE}/#",))
        try:
            code = main(["run", "--config", str(config), "--input", str(SAMPLE)])
            got = probe.drain(0.3)
        finally:
            probe.close()
    assert code == 0
    topics = [m.topic for m in got]
    assert f"{BASE}/event/wake" in topics
    assert topics[-1] == f"{BASE}/status" and got[-1].payload == b"offline"
    states = [json.loads(m.payload)["state"] for m in got if m.topic == f"{BASE}/state"]
    # the command is heard, then understood (an intent goes out, QoS 1); a spoken answer
    # may follow ("responding") before the file ends
    assert states[:3] == ["idle", "listening", "idle"]
    assert set(states[3:]) <= {"responding", "idle"}
    assert f"{BASE}/intent" in topics
    assert "listening on" in capsys.readouterr().err


def test_home_assistant_answers_are_spoken_only_for_intents_awaited(pipeline: Pipeline) -> None:
    """The dialogue (the app's) waits for HA's answer to each HA intent it handed on; a
    response for any other utterance (before a restart, or made up) is not spoken."""
    pipeline.reset()
    recorder, sink = Recorder(), WritingSink()
    dialogue = Dialogue()
    inbox: queue.Queue[Command] = queue.Queue()
    app = SatelliteApp(
        pipeline, recorder, inbox, EspeakEngine(), sink, recorder.publish, dialogue=dialogue
    )
    try:
        made_up = "This answer belongs to no intent the satellite handed on, so it is not spoken."
        app.handle(SpokenResponse("u41", made_up))
        assert app.voice.idle()  # nothing was queued for it
        dialogue.handle(IntentResult("HassTurnOn", {"name": "kitchen light"}), "u42", 0.0)
        app.handle(SpokenResponse("u42", "Done."))
        app.handle(SpokenResponse("u42", made_up))  # answered already: expired
    finally:
        app.close()
    spoken = sum(c.seconds for c in sink.chunks)
    assert 0.2 < spoken < 1.5  # "Done.", and not the made-up one (over 4 s)
    assert app.responses_dropped == 2


def test_without_a_dialogue_no_response_is_spoken(pipeline: Pipeline) -> None:
    """With no dialogue no utterance is awaited, so every response is unknown: dropped."""
    pipeline.reset()
    recorder, sink = Recorder(), WritingSink()
    inbox: queue.Queue[Command] = queue.Queue()
    app = SatelliteApp(pipeline, recorder, inbox, EspeakEngine(), sink, recorder.publish)
    try:
        app.handle(SpokenResponse("u1", "Turned on the kitchen light."))
        assert app.voice.idle()
    finally:
        app.close()
    assert sum(c.seconds for c in sink.chunks) < 0.1
    assert app.responses_dropped == 1
