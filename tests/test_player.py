"""The player: lead-in, jitter buffer, stop within 100 ms of audio, events, conversion.

Tests synchronise on what the player did (bytes at the sink, events), never on time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.audio.events import PlaybackFinished, PlaybackStarted, PlaybackStopped
from satellite.audio.player import Player
from satellite.audio.settings import PlayerSettings
from satellite.errors import AudioDeviceError
from satellite.events import Event

RATE = 16000
WAIT_SECONDS = 10.0


class RecordingSink:
    """Keeps what it is given; can hold the writer once a given amount has arrived."""

    def __init__(self, hold_after_seconds: float | None = None) -> None:
        self.data = bytearray()
        self.first_audio_at_producer_bytes: int | None = None
        self.writes: list[tuple[int, int]] = []  # (bytes before the write, producer bytes)
        self.producer_bytes = 0  # set by the test's producer before each write
        self.hold_after_bytes = (
            None if hold_after_seconds is None else int(hold_after_seconds * RATE) * 2
        )
        self.reached = threading.Event()
        self.release = threading.Event()
        self.fail = False
        self.closed = False

    def write(self, chunk: AudioChunk) -> None:
        assert (chunk.rate_hz, chunk.width_bytes, chunk.channels) == (RATE, 2, 1)
        if self.fail:
            raise OSError("device unplugged")
        if self.first_audio_at_producer_bytes is None and any(chunk.samples):
            self.first_audio_at_producer_bytes = self.producer_bytes
        self.writes.append((len(self.data), self.producer_bytes))
        self.data += chunk.samples
        if self.hold_after_bytes is not None and len(self.data) >= self.hold_after_bytes:
            self.reached.set()
            assert self.release.wait(WAIT_SECONDS)

    def close(self) -> None:
        self.closed = True

    @property
    def seconds(self) -> float:
        return len(self.data) / 2 / RATE


def _settings(**changes: int) -> PlayerSettings:
    values = {
        "rate_hz": RATE,
        "lead_in_ms": 50,
        "prebuffer_ms": 100,
        "period_ms": 20,
        "max_buffer_ms": 1000,
    }
    values.update(changes)
    return PlayerSettings(**values)


def _tone(seconds: float, rate_hz: int = RATE, level: int = 8000) -> AudioChunk:
    t = np.arange(int(seconds * rate_hz)) / rate_hz
    return AudioChunk.from_int16((np.sin(2 * np.pi * 440 * t) * level).astype(np.int16), rate_hz)


def _pieces(total_seconds: float, piece_seconds: float = 0.06) -> Iterator[AudioChunk]:
    for _ in range(round(total_seconds / piece_seconds)):
        yield _tone(piece_seconds)


def test_lead_in_silence_then_the_reply_then_finished() -> None:
    sink = RecordingSink()
    events: list[Event] = []
    player = Player(sink, _settings(), on_event=events.append)
    reply = _tone(0.5)
    assert player.play([reply], "r1")
    assert player.wait(WAIT_SECONDS)
    lead_in = int(0.05 * RATE) * 2
    assert bytes(sink.data[:lead_in]) == bytes(lead_in)
    assert bytes(sink.data[lead_in:]) == reply.samples
    assert [type(e) for e in events] == [PlaybackStarted, PlaybackFinished]
    assert events[0].timestamp_seconds == 0.0
    finished = events[1]
    assert isinstance(finished, PlaybackFinished)
    assert finished.reply_id == "r1"
    assert finished.duration_seconds == pytest.approx(0.5)
    player.close()
    assert sink.closed


def test_output_waits_for_the_jitter_buffer_to_fill() -> None:
    sink = RecordingSink()
    player = Player(sink, _settings(prebuffer_ms=200))
    player.begin("r")
    for chunk in _pieces(1.0, 0.02):
        sink.producer_bytes += len(chunk.samples)
        player.write(chunk)
    player.end()
    assert player.wait(WAIT_SECONDS)
    assert sink.first_audio_at_producer_bytes is not None
    assert sink.first_audio_at_producer_bytes >= int(0.2 * RATE) * 2


def test_a_short_reply_plays_without_filling_the_buffer() -> None:
    sink = RecordingSink()
    player = Player(sink, _settings(prebuffer_ms=500))
    assert player.play([_tone(0.1)])
    assert player.wait(WAIT_SECONDS)
    assert sink.seconds == pytest.approx(0.15)


def test_a_dry_buffer_is_counted_and_refilled_before_output_resumes() -> None:
    sink = RecordingSink()
    player = Player(sink, _settings(prebuffer_ms=200))
    player.begin("slow")
    player.write(_tone(0.2))
    assert _wait_until(lambda: player.underruns == 1)  # all played, synthesis is late
    heard = len(sink.data)
    assert heard == int(0.25 * RATE) * 2
    sink.producer_bytes = 0
    for chunk in _pieces(0.4, 0.02):
        sink.producer_bytes += len(chunk.samples)
        player.write(chunk)
    player.end()
    assert player.wait(WAIT_SECONDS)
    assert len(sink.data) == heard + int(0.4 * RATE) * 2
    resumed = next(producer for before, producer in sink.writes if before == heard)
    assert resumed >= int(0.2 * RATE) * 2


def test_stop_mid_reply_ends_output_within_100_ms_of_audio() -> None:
    sink = RecordingSink(hold_after_seconds=1.0)
    events: list[Event] = []
    player = Player(sink, _settings(max_buffer_ms=3000), on_event=events.append)
    producer_result: list[bool] = []
    producer = threading.Thread(
        target=lambda: producer_result.append(player.play(_pieces(5.0), "long"))
    )
    producer.start()
    assert sink.reached.wait(WAIT_SECONDS)
    at_stop = len(sink.data)
    stopper = threading.Thread(target=player.stop)
    stopper.start()
    assert _wait_until(lambda: player.buffered_seconds == 0.0)
    sink.release.set()
    stopper.join(WAIT_SECONDS)
    producer.join(WAIT_SECONDS)
    assert player.wait(WAIT_SECONDS)
    after_stop_seconds = (len(sink.data) - at_stop) / 2 / RATE
    assert after_stop_seconds <= 0.1
    assert producer_result == [False]
    assert [type(e) for e in events] == [PlaybackStarted, PlaybackStopped]
    stopped = events[1]
    assert isinstance(stopped, PlaybackStopped)
    assert stopped.reason == "stop"
    assert stopped.played_seconds < 1.2


def test_every_begun_reply_gets_one_ending_even_when_dropped() -> None:
    sink = RecordingSink(hold_after_seconds=0.2)
    events: list[Event] = []
    player = Player(sink, _settings(max_buffer_ms=3000), on_event=events.append)
    done = threading.Thread(
        target=lambda: [player.play([_tone(1.0)], "a"), player.play([_tone(0.3)], "b")]
    )
    done.start()
    assert sink.reached.wait(WAIT_SECONDS)
    done.join(WAIT_SECONDS)  # both replies are queued now
    stopper = threading.Thread(target=player.stop)
    stopper.start()
    assert _wait_until(lambda: player.buffered_seconds == 0.0)
    sink.release.set()
    stopper.join(WAIT_SECONDS)
    assert player.wait(WAIT_SECONDS)
    endings = [
        (type(e).__name__, getattr(e, "reply_id", ""))
        for e in events
        if not isinstance(e, PlaybackStarted)
    ]
    assert endings == [("PlaybackStopped", "a"), ("PlaybackStopped", "b")]
    assert player.play([_tone(0.1)], "c")  # the player goes on after a stop
    assert player.wait(WAIT_SECONDS)
    assert isinstance(events[-1], PlaybackFinished)


def test_stop_right_after_begin_ends_that_reply() -> None:
    for _ in range(50):  # whichever side of the player thread's pick-up it lands on
        events: list[Event] = []
        player = Player(RecordingSink(), _settings(), on_event=events.append)
        player.begin("early")
        assert player.stop()
        assert not player.write(_tone(0.1))
        player.end()
        assert player.wait(WAIT_SECONDS)
        assert [(type(e), getattr(e, "reply_id", "")) for e in events] == [
            (PlaybackStopped, "early")
        ]
        player.close()


def test_stop_when_idle_is_harmless() -> None:
    player = Player(RecordingSink(), _settings())
    assert player.stop() is False
    assert not player.playing


def test_chunks_are_converted_to_the_player_rate() -> None:
    sink = RecordingSink()
    player = Player(sink, _settings(lead_in_ms=0))
    assert player.play([_tone(0.25, 22050), _tone(0.25, 22050)])
    assert player.wait(WAIT_SECONDS)
    assert sink.seconds == pytest.approx(0.5, abs=0.005)
    samples = np.frombuffer(bytes(sink.data), dtype="<i2").astype(np.float64)
    spectrum = np.abs(np.fft.rfft(samples))
    assert np.fft.rfftfreq(len(samples), 1 / RATE)[spectrum.argmax()] == pytest.approx(440, abs=3)


def test_a_failing_output_stops_the_reply_and_reports_it() -> None:
    sink = RecordingSink()
    sink.fail = True
    events: list[Event] = []
    player = Player(sink, _settings(), on_event=events.append)
    player.play([_tone(0.3)], "x")
    assert _wait_until(lambda: any(isinstance(e, PlaybackStopped) for e in events))
    stopped = events[-1]
    assert isinstance(stopped, PlaybackStopped)
    assert stopped.reason == "error"
    player.begin("y")
    sink.fail = False
    assert player.write(_tone(0.1))  # a new reply tries the output again
    player.end()
    assert player.wait(WAIT_SECONDS)
    player.begin("z")
    sink.fail = True
    player.write(_tone(0.3))
    player.end()
    assert _wait_until(lambda: player._error is not None)
    with pytest.raises(AudioDeviceError, match="unplugged"):
        player.write(_tone(0.1))


def test_a_write_waiting_on_a_full_buffer_learns_that_the_device_failed() -> None:
    sink = RecordingSink(hold_after_seconds=0.1)
    player = Player(sink, _settings(max_buffer_ms=300))
    raised: list[BaseException] = []

    def produce() -> None:
        player.begin("long")
        try:
            player.write(_tone(3.0))  # far more than the buffer holds: waits for room
        except AudioDeviceError as err:
            raised.append(err)

    writer = threading.Thread(target=produce)
    writer.start()
    assert sink.reached.wait(WAIT_SECONDS)
    sink.fail = True  # the card goes away while the writer waits for room
    sink.release.set()
    writer.join(WAIT_SECONDS)
    assert not writer.is_alive()
    assert raised and "unplugged" in str(raised[0])  # not a silent "stopped"
    player.close()


def test_memory_stays_bounded_whatever_the_reply_length() -> None:
    sink = RecordingSink()
    player = Player(sink, _settings(max_buffer_ms=300))
    assert player.play(_pieces(20.0), "long")
    assert player.wait(WAIT_SECONDS)
    assert sink.seconds == pytest.approx(333 * 0.06 + 0.05)
    assert player.max_buffered_seconds <= 0.3


def _wait_until(condition: object) -> bool:
    """Poll a condition (a callable) until it holds; False after WAIT_SECONDS."""
    assert callable(condition)
    flag = threading.Event()
    for _ in range(int(WAIT_SECONDS / 0.005)):
        if condition():
            return True
        flag.wait(0.005)
    return False
