"""A command said over the satellite's reply is searched from no context of the reply's
own residual echo (issue 19: "the person's speech during the reply is kept").

After a wake word a search adapts to the audio just before the command (its cepstral
mean: the wake word). Over a reply that audio is what the echo canceller left of the
satellite's own voice, and a search that started from its mean made words of it: the
frames that held only that (``TalkOver.own_voice``: heard while it speaks, not above
the predicted residual by the margin) are no context (``MicHistory.context``).
"""

from __future__ import annotations

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.config import validate
from satellite.frontend.echo_talk_over import TalkOver
from satellite.nlu.events import IntentRecognized
from satellite.pipeline import build_pipeline
from satellite.stt.hearing import MIN_CONTEXT_SECONDS, MicHistory
from satellite.stt.keywords import DoubleTalkGate
from tests import corpus, robustness
from tests.duplex_room import Replying
from tests.room import Room, level_db, scale_to

RATE = 16_000
FRAME = 160
#: The satellite's replies (as bench/echo_words.py's).
EARLIER = "Turned off the bedroom lamp. The timer for ten minutes has started."
REPLY = (
    "The weather today is sunny with a high of eighteen degrees, and it will stay dry "
    "until the evening. You have two reminders: take your tablets at six."
)


def _frame(at_seconds: float, amplitude: float = 100.0) -> AudioChunk:
    samples = np.full(FRAME, amplitude, dtype="<i2")
    return AudioChunk(RATE, 2, 1, samples.tobytes(), at_seconds)


def _history(own: range) -> MicHistory:
    """2 s of frames, those whose index is in ``own`` the satellite's own voice."""
    mic = MicHistory()
    for index in range(200):
        frame = _frame(index / 100, 100.0 + index)
        mic.add(frame, frame, own_voice=index in own)
    return mic


def _frames_in(context: AudioChunk | None) -> int:
    return 0 if context is None else len(context.samples) // (2 * FRAME)


def test_a_context_reaches_back_only_to_the_satellites_own_voice() -> None:
    # none of it own voice: as before, the whole span
    assert _frames_in(_history(range(0)).context(1.75, 1.5)) == 150
    assert _history(range(0)).context(1.75, 1.5) == _history(range(0)).before(1.75, 1.5)
    # the person after the reply: only what follows its last own frame
    context = _history(range(0, 120)).context(1.75, 1.5)
    assert _frames_in(context) == 55
    assert context is not None and context.timestamp_seconds == pytest.approx(1.2)
    # own voice just before the command: no context (the live mean)
    assert _history(range(0, 170)).context(1.75, 1.5) is None
    # a recognizer that has searched nothing yet (its live mean cold): the whole span
    assert _frames_in(_history(range(0, 170)).context(1.75, 1.5, warm=False)) == 150
    short = round(MIN_CONTEXT_SECONDS * 100) - 1
    assert _history(range(0, 175 - short)).context(1.75, 1.5) is None
    assert _frames_in(_history(range(0, 175 - short - 1)).context(1.75, 1.5)) == short + 1


def test_frames_at_the_predicted_residual_are_own_voice_a_louder_one_is_not() -> None:
    talk_over = TalkOver(DoubleTalkGate(), 0.5, 12.0)
    rng = np.random.default_rng(3)
    reference = 10 ** rng.uniform(6.5, 7.5, 600)  # a reply playing throughout
    quiet = _frame(0.0, 30.0)  # what the canceller leaves: a fixed share of the echo

    def play(ref: float, out: AudioChunk, learn: bool = True) -> bool:
        talk_over.played(ref, out, learn)
        return talk_over.own_voice

    # nothing learnt yet: every frame while it speaks is its own voice, none after
    assert all(play(r, quiet) for r in reference[:300])
    assert not play(reference[300], quiet, learn=False)
    talk_over.end_reply()  # a reply played alone: the residual is learnt
    talk_over.start_reply()
    assert all(play(r, quiet) for r in reference[300:500])
    loud = _frame(0.0, 30.0 * 10 ** (20 / 20))  # a person 20 dB over the residual
    assert not play(reference[500], loud)
    assert play(reference[501], quiet)


def _heard_over_replies(room: Room, person: corpus.Voice, commands: tuple[str, ...]) -> list[str]:
    """The real loop (mdf with its defaults, hearing while speaking) in ``room``: what it
    heard of each of ``commands``, said by ``person`` over a reply (6 dB below its echo),
    one reply after another; each must have paused or stopped the reply."""
    satellite = corpus.Voice("espeak", "en-us", 160)
    level = 20 * np.log10(3000.0)
    reply = scale_to(corpus.speak(satellite, REPLY).astype(np.float64), level)
    earlier = scale_to(corpus.speak(satellite, EARLIER).astype(np.float64), level)
    config = validate({"frontend": {"echo": {"enabled": True, "engine": "mdf"}}})
    pipeline = build_pipeline(config, understanding=robustness.warm_listener())
    replying = Replying(pipeline, room, seed=round(room.delay_ms))
    replying.reply(earlier)
    heard: list[str] = []
    for command in commands:
        said = corpus.speak(person, command).astype(np.float64)
        turn = replying.reply(reply, scale_to(said, level_db(reply) - 6), 1.0, 3.0)
        assert turn.stopped_at is not None  # it was heard over the reply
        heard.append(" ".join(e.text for e in turn.events if isinstance(e, IntentRecognized)))
    return heard


@pytest.mark.usefixtures("need_espeak")
def test_commands_over_replies_are_heard_through_the_loop() -> None:
    """The real loop (mdf, hearing while speaking) in a room of RT60 0.4 s: commands said
    over replies one after another are heard word for word (before, each search started
    from the mean of the residual echo before it: "stop talking" was heard as "any
    light off in hall would you", "tell me the time" as "could you raise the volume")."""
    commands = ("stop talking", "tell me the time")
    assert _heard_over_replies(Room(100, 0.4), corpus.VOICES_CI[0], commands) == list(commands)


@pytest.mark.usefixtures("need_flite")
def test_commands_over_replies_are_heard_in_a_room_that_rings_on() -> None:
    """The real loop (mdf, its default tail) in a room of RT60 0.6 s: a command said over a
    reply, which the talk-over check pauses, is heard word for word. With a 400 ms tail
    (mdf's default before) they came out as other words: "turn on the ceiling fan" as
    "turn our lights on on bathroom", "turn on the television" as "i want how's
    television" (bench/results/echo_words_loop_tail400.json)."""
    commands = ("turn on the ceiling fan", "turn on the television")
    assert _heard_over_replies(Room(200, 0.6), corpus.VOICES_CI[1], commands) == list(commands)
