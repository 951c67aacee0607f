"""The satellite's one way out, seen from the frame loop: requests end with how they
ended, an output that fails is said out loud on MQTT (as an error), and the loop goes on."""

from __future__ import annotations

import queue
import time

from satellite.app import SatelliteApp
from satellite.audio.chunk import AudioChunk
from satellite.audio.io import NullSink
from satellite.config import Config
from satellite.errors import AudioDeviceError
from satellite.events import Event, StageError
from satellite.mqtt.payloads import Command, SayRequest
from satellite.pipeline import build_pipeline
from satellite.tts.espeak import EspeakEngine
from satellite.voice_out import RequestDone, Speaking, VoiceOut


class FailingSink(NullSink):
    """An output device that breaks after ``good`` writes, until mended."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good
        self.broken = True

    def write(self, chunk: AudioChunk) -> None:
        if self.good <= 0 and self.broken:
            raise AudioDeviceError("the sound card went away")
        self.good -= 1
        super().write(chunk)


def _notices(voice: VoiceOut, count: int, timeout: float = 30.0) -> list[object]:
    got: list[object] = []
    deadline = time.monotonic() + timeout
    while len([n for n in got if isinstance(n, RequestDone)]) < count:
        assert time.monotonic() < deadline, got
        got += voice.poll()
        time.sleep(0.01)
    return got


def test_requests_end_done_stopped_or_error_in_order() -> None:
    voice = VoiceOut(EspeakEngine(), NullSink())
    voice.say("Hello there.", "a")
    notices = _notices(voice, 1)
    assert notices[0] == Speaking(True) and Speaking(False) in notices
    assert RequestDone("a", "done") in notices
    voice.say(" ".join(["counting"] * 300), "long")
    voice.say("Never said.", "dropped")
    voice.stop()
    ended = {n.request_id: n.status for n in _notices(voice, 2) if isinstance(n, RequestDone)}
    assert ended == {"long": "stopped", "dropped": "stopped"}
    voice.speaker.voice = "no-such-voice-zz"  # synthesis fails
    voice.say("Hello again.", "bad")
    (failed,) = [n for n in _notices(voice, 1) if isinstance(n, RequestDone)]
    assert failed.request_id == "bad" and failed.status == "error"
    assert "no-such-voice-zz" in str(failed.error)
    voice.close()


def _poll_until_done(app: SatelliteApp, raw: list[tuple[str, bytes, int]], count: int) -> None:
    """Poll as the frame loop would until ``count`` say/done answers were published."""
    deadline = time.monotonic() + 30
    while sum(path == "say/done" for path, _, _ in raw) < count:
        assert time.monotonic() < deadline
        app.poll()
        time.sleep(0.01)


def test_a_failing_output_is_published_and_the_satellite_goes_on() -> None:
    sink = FailingSink(good=3)
    published: list[Event] = []
    raw: list[tuple[str, bytes, int]] = []

    class Events:
        def publish_event(self, event: Event) -> None:
            published.append(event)

    inbox: queue.Queue[Command] = queue.Queue()
    app = SatelliteApp(
        build_pipeline(Config()),
        Events(),
        inbox,
        EspeakEngine(),
        sink,
        lambda path, payload, qos: raw.append((path, payload, qos)),
    )
    try:
        app.handle(SayRequest("This sentence is long enough to outlast the device.", "s1"))
        _poll_until_done(app, raw, 1)
        errors = [e for e in published if isinstance(e, StageError)]
        assert errors and errors[0].stage == "player"
        assert "cannot speak" in errors[0].message
        assert b'"status":"error"' in raw[0][1].replace(b" ", b"")
        sink.broken = False  # the device is back: the next request is spoken
        app.handle(SayRequest("Back again.", "s2"))
        _poll_until_done(app, raw, 2)
        assert b'"status":"done"' in raw[-1][1].replace(b" ", b"")
        assert app.state == "idle"
    finally:
        app.close()
