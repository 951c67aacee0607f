"""``bench/echo_words.py --loop``: the person's commands over a reply heard as the
satellite hears them, through the real frame loop while it speaks (the echo stage with
the canceller in it, hearing while speaking on: the talk-over check pauses the reply, the
player stops 50 ms later and the room rings on, tests/duplex_room.py), not as a
continuous pipeline over a cut-out of the canceller's output.

The utterance is then opened where the talk-over check places the person's onset and the
recognizer's live cepstral mean is carried from command to command in the same loop, so
this is where how the loop starts an utterance over a reply shows in the words heard.
"""

from __future__ import annotations

from typing import Any

from bench.echo import echo_section
from satellite.actions import AnswerDue
from satellite.config import Config, validate
from satellite.nlu.events import IntentRecognized
from satellite.pipeline import build_pipeline
from tests import robustness
from tests.duplex_room import Replying, Turn
from tests.echo_words import Hearing, graded
from tests.room import Float, Room

#: After the reply the loop hears the room's noise this long (the utterance ends), s.
AFTER_SECONDS = 3.0


def loop_config(engine: str) -> Config:
    """Echo cancellation on with ``engine`` (``mdf-kalman``: mdf with the Kalman gain;
    ``mdf-gate``: mdf with the residual echo gate; ``mdf:700``: learning a 700 ms tail),
    hearing while speaking on (the default)."""
    return validate({"frontend": {"echo": echo_section(engine)}})


class LoopRoom:
    """One room, one engine: the satellite's loop replying reply after reply."""

    def __init__(self, engine: str, room: Room, earlier: Float) -> None:
        config = loop_config(engine)
        pipeline = build_pipeline(config, understanding=robustness.listener(config))
        self.replying = Replying(pipeline, room, seed=round(room.delay_ms))
        self.replying.reply(earlier)  # it has heard the room before (and learnt its voice)

    def hear(
        self,
        reply: Float,
        person: Float,
        at_seconds: float,
        command: str,
        intent: str,
        slots: dict[str, Any],
    ) -> Hearing:
        """``person`` saying ``command`` over ``reply`` from ``at_seconds``."""
        turn = self.replying.reply(reply, person, at_seconds, after_seconds=AFTER_SECONDS)
        return hearing(turn, command, intent, slots)


def hearing(turn: Turn, command: str, intent: str, slots: dict[str, Any]) -> Hearing:
    """What the loop made of ``command`` in ``turn``."""
    heard = [e for e in turn.events if isinstance(e, IntentRecognized)]
    transcript = " ".join(e.text for e in heard if e.text)
    answers = [a for a in turn.actions if isinstance(a, AnswerDue)]
    if not answers:
        return graded(transcript, None, False, command, intent, slots)
    return graded(transcript, answers[0].result, answers[0].doubtful, command, intent, slots)
