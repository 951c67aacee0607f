"""Echo cancellation on a simulated room (tests/room.py): the satellite's reply reaches its
microphone after the output latency, through a reverberant room, louder than a person;
the canceller, fed what the player sent, takes it out and keeps the person."""

from __future__ import annotations

import numpy as np
import pytest
import soxr

from satellite.audio.chunk import AudioChunk
from satellite.audio.echo_tap import EchoTap
from satellite.audio.io import NullSink
from satellite.config import validate
from satellite.frontend.echo import (
    EchoReference,
    EchoStage,
    MicClock,
    echo_return_loss_enhancement,
)
from satellite.frontend.echo_engines import SpeexEchoCanceller, make_echo_canceller
from satellite.stages import build_stages
from tests import synth
from tests.room import Float, Room, level_db, scale_to

pytestmark = pytest.mark.usefixtures("need_espeak")
RATE = 16000


@pytest.fixture(scope="module")
def reply() -> Float:
    text = "The kitchen light is on. It is twenty past four, and the weather is fine today."
    return scale_to(synth.espeak(text, "en-us", 160).astype(np.float64), 20 * np.log10(3000))


def _int16(x: Float) -> np.ndarray:
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def _cancel(engine: str, mic: np.ndarray, far: np.ndarray) -> np.ndarray:
    canceller = make_echo_canceller(engine)
    out = np.zeros_like(mic)
    for start in range(0, len(mic) - 159, 160):
        out[start : start + 160] = canceller.process(
            mic[start : start + 160], far[start : start + 160]
        )
    canceller.close()
    return out


def _aligned(reply: Float, delay_ms: float) -> np.ndarray:
    """The reference as the echo tap gives it: the reply at its playing position, 2.5 ms
    early (the latency is only known roughly)."""
    shift = int(delay_ms * RATE / 1000) - 40
    return _int16(np.concatenate([np.zeros(shift), reply])[: len(reply)])


def test_the_reference_keeps_what_played_where_it_is_heard() -> None:
    ref = EchoReference(keep_samples=1000)
    ref.push(np.arange(1, 101, dtype=np.int16), 500)
    assert ref.take(480, 40).tolist() == [0] * 20 + list(range(1, 21))
    assert ref.last_played == 600
    ref.push(np.full(10, 7, np.int16), 590)  # a later piece overlapping: it wins
    assert ref.take(595, 10).tolist() == [7] * 5 + [0] * 5
    ref.push(np.ones(2000, np.int16), 700)  # more than it keeps: the oldest goes
    assert not ref.take(500, 100).any()
    assert ref.take(2600, 100).all()


def test_the_mic_clock_takes_the_earliest_offset() -> None:
    now = [100.0]
    clock = MicClock(lambda: now[0])
    assert clock.position(100.0) is None
    clock.heard(0.01)  # frame ending at 10 ms seen at 100.0 s
    now[0] = 100.5
    clock.heard(0.2)  # the loop fell behind: ignored
    assert clock.position(100.0) == 160
    assert clock.position(101.0) == 16160


@pytest.mark.parametrize("delay_ms", [20, 100, 200])
def test_speex_takes_out_25_db_of_echo_once_it_has_learnt_the_room(
    reply: Float, delay_ms: int
) -> None:
    echo = Room(delay_ms=delay_ms, rt60_seconds=0.3).echo(reply)
    out = _cancel("speex", _int16(echo), _aligned(reply, delay_ms))
    assert echo_return_loss_enhancement(echo[RATE : 2 * RATE], out[RATE : 2 * RATE]) >= 10
    assert echo_return_loss_enhancement(echo[2 * RATE : len(out)], out[2 * RATE :]) >= 25


def test_webrtc_takes_out_more_echo_sooner(reply: Float) -> None:
    echo = Room(delay_ms=100, rt60_seconds=0.3).echo(reply)
    out = _cancel("webrtc", _int16(echo), _aligned(reply, 100))
    assert echo_return_loss_enhancement(echo[RATE : len(out)], out[RATE:]) >= 25


def _person_over_reply(reply: Float) -> tuple[Float, Float, slice]:
    """The reply's echo (60 ms, RT60 0.3 s) with a person saying "stop" 6 dB below it
    from 2.5 s on: the microphone, the person alone, and where they speak."""
    person = synth.espeak("stop", "en-us+f3", 150).astype(np.float64)
    person = scale_to(person, level_db(reply) - 6)
    start = int(2.5 * RATE)
    near = np.zeros(len(reply))
    near[start : start + len(person)] = person
    echo = Room(delay_ms=60, rt60_seconds=0.3).echo(reply)
    return echo + near, near, slice(start, start + len(person))


def test_speex_keeps_the_person_who_talks_over_the_reply(reply: Float) -> None:
    mic, near, span = _person_over_reply(reply)
    out = _cancel("speex", _int16(mic), _aligned(reply, 60)).astype(np.float64)
    late = slice(span.start + 160, span.stop + 160)  # speex's output is a frame late
    assert np.corrcoef(out[late], near[span])[0, 1] > 0.85
    assert level_db(out[late]) > level_db(near[span]) - 3  # not suppressed


def test_webrtc_mutes_the_person_who_talks_over_the_reply(reply: Float) -> None:
    """Why webrtc is not the default: its suppressor takes the person out as well."""
    mic, near, span = _person_over_reply(reply)
    out = _cancel("webrtc", _int16(mic), _aligned(reply, 60)).astype(np.float64)
    assert level_db(out[span]) < level_db(near[span]) - 6


def test_with_nothing_played_the_stage_passes_the_microphone_through() -> None:
    stage = EchoStage(SpeexEchoCanceller())
    frame = synth.to_chunk(synth.espeak("hello", "en-us", 150)[:160])
    assert stage.process(frame) == frame
    assert stage.frames_cancelled == 0


def test_the_tap_aligns_what_plays_with_the_microphone(reply: Float) -> None:
    """The real path: the player writes 22.05 kHz audio through the tap at the times a
    sound card would take it, the loop hears the room's echo frame by frame; the stage
    puts the two together on its own clock and cancels."""
    now = [50.0]
    stage = EchoStage(make_echo_canceller("speex"), clock=MicClock(lambda: now[0]))
    stage.latency_seconds = 0.04
    tap = EchoTap(NullSink(), stage.played, clock=lambda: now[0])
    echo = Room(delay_ms=40, rt60_seconds=0.3).echo(reply)
    mic = _int16(echo)
    played = _int16(soxr.resample(reply / 32768, RATE, 22050) * 32768)
    out = np.zeros_like(mic)
    for start in range(0, len(mic) - 159, 160):
        now[0] = 50.0 + (start + 160) / RATE
        frame = AudioChunk(RATE, 2, 1, mic[start : start + 160].tobytes(), start / RATE)
        out[start : start + 160] = np.frombuffer(stage.process(frame).samples, np.int16)
        if start % 320 == 0:  # every 20 ms the player hands the next 20 ms to the card
            first = (start + 160) * 22050 // RATE
            piece = played[first : first + 441]
            if len(piece):
                tap.write(AudioChunk(22050, 2, 1, piece.tobytes(), 0.0))
    assert stage.frames_cancelled > len(mic) // 160 - 10
    erle = echo_return_loss_enhancement(echo[2 * RATE : len(out)], out[2 * RATE :])
    assert erle >= 25, erle


def test_the_pipeline_builds_the_stage_from_the_config() -> None:
    on = validate({"frontend": {"echo": {"enabled": True, "engine": "speex"}}})
    stages = build_stages(on)
    assert isinstance(stages.echo, EchoStage)
    assert stages.echo.latency_seconds == 0.0  # the device's own delay: not known
    later = validate({"frontend": {"echo": {"enabled": True, "latency_ms": 25}}})
    assert build_stages(later).echo.latency_seconds == 0.025  # type: ignore[union-attr]
    assert build_stages(validate({})).echo is None


def test_the_stage_keeps_the_room_it_learnt_for_the_next_reply(reply: Float) -> None:
    """The room does not change between replies: after one reply and two seconds of
    quiet (the stage passes the microphone through), the next reply's echo is taken out
    from its first second, where a new canceller takes out little."""
    room = Room(delay_ms=100, rt60_seconds=0.3)
    said = synth.espeak("Turned off the bedroom lamp. The timer has started.", "en-us", 160)
    earlier = scale_to(said.astype(np.float64), level_db(reply))
    quiet = np.zeros(2 * RATE)
    played = np.concatenate([earlier, quiet, reply])
    echo = room.echo(played)
    stage = EchoStage(make_echo_canceller("speex"))
    far = _aligned(played, 100)
    begin = len(earlier) + len(quiet)
    out = np.zeros(len(played), np.int16)
    for start in range(0, len(played) - 159, 160):
        ahead = start + 1600  # the player hands each piece on 100 ms before it is heard
        if ahead < len(earlier) + 1600 or ahead >= begin:
            stage.reference.push(far[ahead : ahead + 160], ahead)
        frame = AudioChunk(RATE, 2, 1, _int16(echo[start : start + 160]).tobytes(), start / RATE)
        out[start : start + 160] = np.frombuffer(stage.process(frame).samples, np.int16)
    assert stage.frames_cancelled < len(played) // 160 - RATE // 160  # quiet passed through
    first = slice(begin, begin + RATE)
    carried = echo_return_loss_enhancement(echo[first], out[first])
    fresh = _cancel("speex", _int16(echo[begin:]), _aligned(played, 100)[begin:])
    new = echo_return_loss_enhancement(echo[first], fresh[:RATE])
    assert carried >= 25, carried
    assert new < 15, new
