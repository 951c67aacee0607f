"""The double-talk margins learn from the satellite's own voice (issue 19).

``LearntMargin`` is shared by the stop words' gate (satellite/stt/keywords.py) and the
talk-over check (satellite/frontend/echo_talk_over.py): a ringing room, where what the
canceller leaves of the reply comes close to the base margin, raises it; a quiet one
keeps the base; what was measured while someone spoke is never learnt. Then the real
frame loop in simulated rooms (tests/duplex_room.py): at RT60 0.6 s no reply stops
itself; in a drier room "stop" said over a reply still stops it.
"""

from __future__ import annotations

import numpy as np
import pytest

from satellite.actions import StopSaid
from satellite.config import validate
from satellite.events import SpeechStarted
from satellite.pipeline import Pipeline, build_pipeline
from satellite.stt.keywords import HEADROOM_DB, LEARN_REPLIES, LearntMargin
from satellite.supervisor import Supervisor
from satellite.while_speaking import WhileSpeaking
from tests import corpus
from tests.duplex_room import Replying, reply_audio
from tests.room import Float, Room

BASE_DB = 9.0


def _reply(margin: LearntMargin, *measured: float) -> None:
    """A reply the satellite played alone, with what the gate measured on it."""
    margin.start_reply()
    for value in measured:
        margin.measure(value)
    margin.end_reply()


def test_a_quiet_room_keeps_the_base_margin() -> None:
    margin = LearntMargin(BASE_DB)
    _reply(margin, 2.0, 5.5, 4.0)
    _reply(margin, -3.0)
    assert margin.now_db == BASE_DB  # 5.5 dB + the headroom is still under the base


def test_a_ringing_room_raises_it_above_the_most_measured_on_its_own_voice() -> None:
    margin = LearntMargin(BASE_DB)
    _reply(margin, 6.0, 8.8)
    assert margin.now_db == pytest.approx(8.8 + HEADROOM_DB)
    _reply(margin, 9.3, 7.0)
    _reply(margin, 4.0)  # a quieter reply does not lower it
    assert margin.now_db == pytest.approx(9.3 + HEADROOM_DB)


def test_what_was_measured_while_someone_spoke_is_not_learnt() -> None:
    margin = LearntMargin(BASE_DB)
    margin.start_reply()
    margin.measure(5.0)
    margin.measure(25.0)  # a person over the reply
    margin.start_reply()  # ... so the reply was spoken over: dropped
    margin.end_reply()
    assert margin.now_db == BASE_DB
    assert not margin.own_db  # nothing measured after it: nothing learnt


def test_a_loud_reply_is_forgotten_after_the_replies_it_learns_from() -> None:
    margin = LearntMargin(BASE_DB)
    _reply(margin, 12.0)
    for _ in range(LEARN_REPLIES - 1):
        _reply(margin, 4.0)
    assert margin.now_db == pytest.approx(12.0 + HEADROOM_DB)
    _reply(margin, 4.0)
    assert margin.now_db == BASE_DB


def test_a_new_room_forgets_what_was_learnt() -> None:
    margin = LearntMargin(BASE_DB)
    _reply(margin, 11.0)
    margin.measure(30.0)  # a reply under way
    margin.forget()
    margin.end_reply()
    assert margin.now_db == BASE_DB


#: Replies that stopped themselves in this room with a fixed 9 dB margin (the 4th and
#: 5th: "Sorry ..." at 2.42 s, "Say stop ..." at 4.31 s, where the reply goes quiet
#: and the room rings on past the canceller's filter).
RINGING = (
    "It is twenty past four in the afternoon.",
    "Sorry, I did not catch that. Could you say it again?",
    "Say stop, or be quiet, whenever you want me to stop talking.",
)
PERSON = corpus.Voice("flite", "slt", 1.0)


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return build_pipeline(validate({"frontend": {"echo": {"enabled": True}}}))


@pytest.fixture(scope="module")
def replies() -> list[Float]:
    return [reply_audio(text) for text in RINGING]


@pytest.mark.usefixtures("need_espeak")
def test_in_a_ringing_room_no_reply_stops_itself(pipeline: Pipeline, replies: list[Float]) -> None:
    replying = Replying(pipeline, Room(20, 0.6, seed=6), seed=6)
    spotter = pipeline.stages.stop_words
    assert spotter is not None
    for reply in [*replies, replies[1], replies[2]]:
        turn = replying.reply(reply)
        assert turn.stopped_at is None, turn.actions
        assert not [e for e in turn.events if isinstance(e, SpeechStarted)]
    assert spotter.spotted > 0  # the search took the satellite's own voice for its words
    assert spotter.margin.own_db  # ... and the margin learnt from it


@pytest.mark.usefixtures("need_espeak")
def test_in_a_drier_room_stop_said_over_a_reply_still_stops_it(
    pipeline: Pipeline, replies: list[Float]
) -> None:
    if not PERSON.available:
        pytest.skip(f"{PERSON.label} is not installed (scripts/bootstrap.sh)")
    replying = Replying(pipeline, Room(100, 0.4, seed=3), seed=3)
    spotter = pipeline.stages.stop_words
    assert spotter is not None
    for reply in replies[:2]:  # the canceller learns the room
        assert replying.reply(reply).stopped_at is None
    learnt = list(spotter.margin.own_db)
    said = corpus.speak(PERSON, "stop").astype(np.float64)
    turn = replying.reply(replies[2], said, at_seconds=1.5)
    assert turn.stopped_at is not None and turn.person is not None
    assert [a for a in turn.actions if isinstance(a, StopSaid)]
    assert turn.person[0] < turn.stopped_at <= turn.person[1] + 0.3
    assert list(spotter.margin.own_db) == learnt  # a person's word is not learnt from


def test_a_reply_spoken_over_teaches_neither_margin(pipeline: Pipeline) -> None:
    """The talk-over check paused the reply (or the wake word barged in): what the gates
    measured on it was a person too, not the satellite's own voice."""
    stages = pipeline.stages
    spotter, talk_over = stages.stop_words, stages.talk_over
    assert spotter is not None and talk_over is not None
    spotter.reset()
    talk_over.reset()
    voice = WhileSpeaking(stages, Supervisor())
    voice.set_speaking(True)
    spotter.start()
    spotter.margin.measure(20.0)
    talk_over.margin.measure(20.0)
    voice.pause(1.0, 1.2)  # someone spoke over it
    spotter.stop()
    voice.set_speaking(False)
    assert not spotter.margin.own_db and not talk_over.margin.own_db
    voice.set_speaking(True)  # the next reply, alone
    spotter.start()
    spotter.margin.measure(8.0)
    talk_over.margin.measure(11.0)
    spotter.stop()
    voice.set_speaking(False)
    assert list(spotter.margin.own_db) == [8.0] and list(talk_over.margin.own_db) == [11.0]
