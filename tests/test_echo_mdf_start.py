"""How fast our own echo canceller (``engine: mdf``) learns a new room, on the simulated
room (tests/room.py, noise 30 dB below the reply) with the NLMS step
(``mdf_adaptation: nlms``; the Kalman gain: tests/test_echo_kalman.py): while its filter
is young it learns again from the frames it has just heard (data reuse) with a
proportionate step, and a moved speaker makes it young again without the faster
learning running away."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.frontend.echo_mdf import REPLAYS, MdfEchoCanceller
from tests import synth
from tests.room import Float, Room, Speaking, level_db, scale_to

pytestmark = pytest.mark.usefixtures("need_espeak")
RATE = 16000
TEXTS = (
    "Turned off the bedroom lamp. The timer for ten minutes has started.",
    "The kitchen light is on. It is twenty past four, and the weather is fine today.",
    "You have two reminders: take your tablets at six, and call your daughter.",
)


@pytest.fixture(scope="module")
def replies() -> list[Float]:
    """Three of the satellite's replies (eSpeak NG)."""
    level = 20 * np.log10(3000.0)
    return [scale_to(synth.espeak(t, "en-us", 160).astype(np.float64), level) for t in TEXTS]


def _after_one_second_of_echo(room: Room, reply: Float, replays: int) -> tuple[float, float]:
    """A new filter's first reply: the echo taken out in the second after the echo's
    first second, and from there to the reply's end."""
    canceller = MdfEchoCanceller(tail_ms=400, replays=replays, adaptation="nlms")
    said = Speaking(room, canceller.process, late=0).reply(reply)
    onset = int(room.delay_ms * RATE / 1000)
    return (
        said.echo_taken_out_db(slice(onset + RATE, onset + 2 * RATE)),
        said.echo_taken_out_db(slice(onset + RATE, len(reply))),
    )


@pytest.mark.parametrize("room", [Room(20, 0.2), Room(200, 0.6)])
def test_a_new_filter_learns_more_in_its_first_seconds(replies: list[Float], room: Room) -> None:
    """Learning again from the frames just heard: from 1 s of echo on a new filter takes
    out clearly more than with new frames only (measured 18.7 against 14.1 dB at RT60
    0.2 s, 13.5 against 9.9 at 0.6 s), and at RT60 0.2 s 12 dB in the second after
    1 s of echo (14.0 measured; 9.7 with new frames only). On a 400 ms tail, mdf's
    default when this was measured; on its 600 ms default the gain at RT60 0.2 s is
    smaller (16.8 against 14.1 dB)."""
    second, rest = _after_one_second_of_echo(room, replies[1], replays=REPLAYS)
    _, rest_new_only = _after_one_second_of_echo(room, replies[1], replays=0)
    assert rest >= rest_new_only + 3.0, (rest, rest_new_only)
    if room.rt60_seconds <= 0.2:
        assert second >= 12.0, second


def test_after_one_reply_in_a_new_room_the_next_has_the_echo_out_from_its_start(
    replies: list[Float],
) -> None:
    """The issue's 25 dB from the second reply on: one reply (with its 0.5 s tail) in
    a new room, and the next reply's first second has 25 dB of echo taken out (30.0
    measured; 21.4 before the data reuse)."""
    room = Room(100, 0.4)
    canceller = MdfEchoCanceller(adaptation="nlms")
    speaking = Speaking(room, canceller.process, late=0)
    speaking.reply(replies[1])
    assert canceller.frames_replayed > 0
    said = speaking.reply(replies[2])
    assert said.echo_taken_out_db(slice(0, RATE)) >= 25.0
    assert not canceller.young  # learnt: no more replays, no more cost
    replayed = canceller.frames_replayed
    speaking.reply(replies[0])
    assert canceller.frames_replayed == replayed


def test_a_moved_speaker_is_learnt_again_quickly_and_never_runs_away(
    replies: list[Float],
) -> None:
    """A filter learnt in one room, then the speaker moved: the output is never louder
    than the microphone (second by second), the filter is young again (it learns from
    remembered frames of the new room only), and by the second reply in the new room
    the echo is taken out again (25.3 dB measured; 20.4 before the data reuse)."""
    canceller = MdfEchoCanceller(adaptation="nlms")
    before = Speaking(Room(100, 0.4), canceller.process, late=0)
    for reply in replies[:2]:
        before.reply(reply)
    replayed = canceller.frames_replayed
    moved = Speaking(Room(60, 0.3, seed=5), canceller.process, late=0)
    for index, reply in enumerate((replies[0], replies[1])):
        said = moved.reply(reply)
        for start in range(0, len(said.mic) - RATE + 1, RATE):
            second = slice(start, start + RATE)
            louder = level_db(said.cancelled[second]) - level_db(said.mic[second])
            assert louder <= 0.5, (index, start / RATE, louder)
    assert canceller.frames_replayed > replayed
    assert said.echo_taken_out_db(slice(RATE, len(said.mic))) >= 22.0
