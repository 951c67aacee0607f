"""The residual echo gate after our own canceller (``echo_gate``, ``frontend.echo.residual_gate``):
in a new room's first reply it takes the echo the young filter leaves down to the issue's
25 dB from the second after 1 s of echo on, where the filter alone is far below it; a
person talking over the reply passes whole, and the room's noise is never gated away
(tests/room.py)."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.config import validate
from satellite.frontend.echo import EchoStage, echo_return_loss_enhancement
from satellite.frontend.echo_engines import make_echo_canceller
from satellite.frontend.echo_mdf import MdfEchoCanceller
from tests import synth
from tests.room import Float, Room, Speaking, level_db, scale_to, to_int16

pytestmark = pytest.mark.usefixtures("need_espeak")

RATE = 16000
REPLY = "The kitchen light is on. It is twenty past four, and the weather is fine today."


@pytest.fixture(scope="module")
def reply() -> Float:
    return scale_to(synth.espeak(REPLY, "en-us", 160).astype(np.float64), 20 * np.log10(3000))


@pytest.fixture(scope="module")
def person(reply: Float) -> Float:
    """ "stop", 6 dB below the reply's echo (a small speaker next to the microphone)."""
    said = synth.espeak("stop", "en-us+f3", 150).astype(np.float64)
    return scale_to(said, level_db(reply) - 6)


def _cancel(canceller: MdfEchoCanceller, room: Room, played: Float, near: Float) -> Float:
    """``played`` into ``room`` with ``near`` at the microphone, through ``canceller``
    (the reference 2.5 ms before the echo's direct path, as the echo tap gives it)."""
    mic = to_int16(room.echo(played) + near)
    shift = int(room.delay_ms * RATE / 1000) - 40
    far = to_int16(np.concatenate([np.zeros(shift), played])[: len(played)])
    out = np.zeros(len(played))
    for start in range(0, len(played) - 159, 160):
        piece = slice(start, start + 160)
        out[piece] = canceller.process(mic[piece], far[piece])
    return out


@pytest.mark.parametrize("room", [Room(20, 0.2), Room(100, 0.4), Room(200, 0.6)])
def test_a_new_filter_with_the_gate_has_25_db_out_in_the_second_after_1_s(
    reply: Float, room: Room
) -> None:
    """Measured: 32.8 / 31.7 / 36.4 dB with the gate, 16.6 / 11.8 / 10.0 without."""
    onset = int(room.delay_ms * RATE / 1000)
    learnt = slice(onset + RATE, onset + 2 * RATE)
    echo = room.echo(reply)
    erle = {}
    for gated in (False, True):
        out = _cancel(MdfEchoCanceller(residual_gate=gated), room, reply, np.zeros(len(reply)))
        erle[gated] = echo_return_loss_enhancement(echo[learnt], out[learnt])
    assert erle[True] >= 25.0, erle
    assert erle[False] < 20.0, erle


@pytest.mark.parametrize("room", [Room(20, 0.2), Room(100, 0.4), Room(200, 0.6)])
def test_a_person_over_a_new_filters_reply_is_kept(reply: Float, person: Float, room: Room) -> None:
    """ "stop" 2.5 s into a new room's first reply: its level and shape come through as
    with the filter alone (measured: level within 0.2 dB, correlation 0.979-0.997, at
    most 0.007 below the filter alone's)."""
    start = int(2.5 * RATE)
    near = np.zeros(len(reply))
    near[start : start + len(person)] = person
    span = slice(start, start + len(person))
    kept = {}
    for gated in (False, True):
        out = _cancel(MdfEchoCanceller(residual_gate=gated), room, reply, near)
        kept[gated] = out[span]
    assert abs(level_db(kept[True]) - level_db(person)) < 1.0
    with_gate = float(np.corrcoef(kept[True], person)[0, 1])
    alone = float(np.corrcoef(kept[False], person)[0, 1])
    assert with_gate > 0.97, (with_gate, alone)
    assert with_gate > alone - 0.02, (with_gate, alone)


def test_a_person_over_a_later_reply_passes_whole(reply: Float, person: Float) -> None:
    """Once the filter has learnt the room the person is far above what it leaves: the
    gate is open for all of their word (the output as the filter alone's)."""
    room = Room(100, 0.4)
    start = int(2.5 * RATE)
    near = np.zeros(len(reply))
    near[start : start + len(person)] = person
    span = slice(start, start + len(person))
    kept = {}
    for gated in (False, True):
        canceller = MdfEchoCanceller(residual_gate=gated)
        _cancel(canceller, room, reply, np.zeros(len(reply)))
        kept[gated] = _cancel(canceller, room, reply, near)[span]
    assert abs(level_db(kept[True]) - level_db(kept[False])) < 0.5
    assert float(np.corrcoef(kept[True], kept[False])[0, 1]) > 0.995


def test_the_room_noise_is_not_gated_away(reply: Float) -> None:
    """Noise 30 dB below the reply: frames of residual echo are taken down no further
    than the room's noise (no silence cut into it for the VAD or the recognizer), while
    the echo out still rises well above the filter alone's."""
    room = Room(100, 0.4)
    said = {}
    for gated in (False, True):
        canceller = MdfEchoCanceller(residual_gate=gated)
        said[gated] = Speaking(room, canceller.process, late=0, seed=3).reply(reply)
    frames = range(RATE, len(reply) - 160, 160)
    below = [
        level_db(said[True].cancelled[f : f + 160]) - level_db(said[True].alone[f : f + 160])
        for f in frames
    ]
    assert np.mean(np.asarray(below) < -3.0) < 0.05, np.percentile(below, [1, 5, 50])
    learnt = slice(RATE, 2 * RATE)
    erle = {gated: said[gated].echo_taken_out_db(learnt) for gated in said}
    assert erle[True] >= erle[False] + 6.0, erle


def test_with_nothing_played_the_microphone_passes_as_it_is() -> None:
    canceller = MdfEchoCanceller(residual_gate=True)
    mic = to_int16(np.random.default_rng(1).standard_normal(RATE) * 1000)
    silent = np.zeros(160, np.int16)
    for start in range(0, RATE, 160):
        piece = mic[start : start + 160]
        assert np.array_equal(canceller.process(piece, silent), piece)


def test_the_config_turns_the_gate_on_for_mdf_only_when_asked() -> None:
    for residual_gate, expected in ((False, False), (True, True)):
        echo = validate(
            {"frontend": {"echo": {"engine": "mdf", "residual_gate": residual_gate}}}
        ).frontend.echo
        canceller = make_echo_canceller(
            echo.engine, echo.tail_ms, echo.mdf_adaptation, echo.residual_gate
        )
        assert isinstance(canceller, MdfEchoCanceller)
        assert (canceller.gate is not None) is expected
    assert validate({}).frontend.echo.residual_gate is False


def test_the_stage_gives_the_double_talk_checks_the_filters_own_output(reply: Float) -> None:
    """With the gate, the echo stage returns the gated frame and keeps the filter's
    output beside it (``EchoStage.linear``), which the double-talk checks measure (their
    margins were set on it: measured on the gated output, a residual frame the gate let
    through stood out and the satellite paused itself, bench/duplex_talk_over.py);
    without it, ``linear`` is the frame returned."""
    room = Room(100, 0.4)
    mic = to_int16(room.echo(reply))
    shift = int(room.delay_ms * RATE / 1000) - 40
    far = to_int16(np.concatenate([np.zeros(shift), reply])[: len(reply)])
    for gated in (False, True):
        stage = EchoStage(MdfEchoCanceller(residual_gate=gated), latency_seconds=0.0)
        differs = 0
        for start in range(0, 2 * RATE, 160):
            stage.reference.push(far[start : start + 160], start)  # as the player taps it
            frame = AudioChunk(RATE, 2, 1, mic[start : start + 160].tobytes(), start / RATE)
            out = stage.process(frame)
            assert stage.linear is not None
            if not gated:
                assert stage.linear is out
            elif stage.linear.samples != out.samples:
                differs += 1
                assert level_db(np.frombuffer(out.samples, np.int16)) <= level_db(
                    np.frombuffer(stage.linear.samples, np.int16)
                )
        assert (differs > 50) is gated, differs
