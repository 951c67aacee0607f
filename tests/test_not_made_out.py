"""A request not made out in a loud room is asked for again.

In a loud room, or among other voices, a request the satellite could not make out was
answered "Sorry, I didn't understand that", and the person had to say the wake word
again. It is the room's noise that failed the hearing there, so now the satellite asks
"Sorry, say that again" and listens without the wake word
(``stt.ask_again_not_understood``). What it then hears is judged as a first hearing: a
sure request is acted on, a doubtful one is asked about (once), and a second take not
made out is "not understood": the satellite asks for a request at most twice. In a
quiet room, not understood is mostly speech it has no command for, and is answered as
before; so is a thing said that is no command ("thanks").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from satellite.actions import AnswerDue, HaIntentRequested, ListenAgain, ReplyRequested
from satellite.config import Config, validate
from satellite.nlu.help_answers import HelpQuestion
from satellite.nlu.intents import NOT_A_COMMAND
from satellite.nlu.recognizer import IntentResult
from satellite.understanding import Understanding
from satellite.understanding.answers import Answers
from satellite.understanding.dialogue import REPLIES, Dialogue
from tests import corpus, robustness, synth
from tests.app_harness import converse
from tests.fake_recognizer import Heard, SaidInTurn, decide, stage, understanding_with

LIGHT_ON = IntentResult("HassTurnOn", {"name": "kitchen light"}, text="turn on the kitchen light")
STATE = IntentResult("HassGetState", {"name": "kitchen light"}, text="is the kitchen light on")
NOT_MADE_OUT = IntentResult(None, text="for me the our garden")


def _replies(items: Sequence[object]) -> list[str]:
    return [e.text for e in items if isinstance(e, ReplyRequested)]


def _asks(items: Sequence[object]) -> bool:
    """Whether the dialogue asked once more and listens without the wake word."""
    listens = any(isinstance(e, ListenAgain) for e in items)
    return listens and _replies(items) == [REPLIES["say_again"]]


def _done(items: Sequence[object]) -> list[str]:
    return [e.intent for e in items if isinstance(e, HaIntentRequested)]


def test_not_made_out_in_a_loud_room_is_asked_for_and_a_sure_answer_acted_on() -> None:
    dialogue = Dialogue()
    first = dialogue.handle(NOT_MADE_OUT, "u1", 1.0, doubtful=True)
    assert _asks(first) and not _done(first)
    assert dialogue.asking
    assert dialogue.question.asked is None  # nothing to be repeated
    assert _done(dialogue.handle(LIGHT_ON, "u2", 4.0)) == ["HassTurnOn"]
    assert not dialogue.asking


def test_a_doubtful_answer_to_it_is_asked_about_then_done_when_repeated() -> None:
    dialogue = Dialogue()
    dialogue.handle(NOT_MADE_OUT, "u1", 1.0, doubtful=True)
    second = dialogue.handle(LIGHT_ON, "u2", 4.0, doubtful=True)
    assert _asks(second) and not _done(second)
    assert dialogue.question.asked == LIGHT_ON
    assert _done(dialogue.handle(LIGHT_ON, "u3", 7.0, doubtful=True)) == ["HassTurnOn"]


def test_it_asks_at_most_twice() -> None:
    """Not made out twice; or not made out, asked about, then another request: not
    understood, and the satellite stops listening without the wake word."""
    dialogue = Dialogue()
    dialogue.handle(NOT_MADE_OUT, "u1", 1.0, doubtful=True)
    again = dialogue.handle(NOT_MADE_OUT, "u2", 4.0, doubtful=True)
    assert _replies(again) == [REPLIES["not_understood"]] and not dialogue.asking
    dialogue.handle(NOT_MADE_OUT, "u3", 10.0, doubtful=True)
    dialogue.handle(STATE, "u4", 13.0, doubtful=True)
    third = dialogue.handle(LIGHT_ON, "u5", 16.0, doubtful=True)
    assert _replies(third) == [REPLIES["not_understood"]] and not _done(third)
    assert not dialogue.asking


def test_an_answer_not_made_out_after_asking_about_a_request_is_not_understood() -> None:
    dialogue = Dialogue()
    dialogue.handle(STATE, "u1", 1.0, doubtful=True)
    answer = dialogue.handle(NOT_MADE_OUT, "u2", 4.0, doubtful=True)
    assert _replies(answer) == [REPLIES["not_understood"]] and not dialogue.asking


def test_not_made_out_without_doubt_is_not_understood() -> None:
    events = Dialogue().handle(NOT_MADE_OUT, "u1", 1.0)
    assert _replies(events) == [REPLIES["not_understood"]]
    assert not any(isinstance(e, ListenAgain) for e in events)


# --- which rooms: understanding marks the answer owed -------------------------------------


def _owed(understanding: Understanding, loud: bool = False, voices: bool = False) -> AnswerDue:
    stage(understanding, loud=loud, denoised=loud, floor=150 if voices else 20, voices=voices)
    decide(understanding, 1.2, 1.5)
    (answer,) = [a for a in understanding.take_actions() if isinstance(a, AnswerDue)]
    return answer


def _garbled(config: Config | None = None) -> Understanding:
    """Understanding that hears words that are no command."""
    return understanding_with(Heard("for me the our garden", -5.0), config)


def test_not_made_out_is_asked_for_in_a_loud_room_and_among_voices_only() -> None:
    assert _owed(_garbled(), loud=True).doubtful
    assert _owed(_garbled(), voices=True).doubtful
    quiet = _owed(_garbled())
    assert quiet.result.intent is None and not quiet.doubtful


def test_not_with_the_setting_off() -> None:
    off = validate({"stt": {"ask_again_not_understood": False}})
    assert not _owed(_garbled(off), loud=True).doubtful


def test_a_thing_said_that_is_no_command_is_not_asked_for() -> None:
    """ "thank you" (the short check's ``NOT_A_COMMAND``) asks for nothing: answered as
    before, in any room."""
    answers = Answers(Config().stt, None, HelpQuestion())
    for loud in (False, True):
        answers.conclude("u1", IntentResult(NOT_A_COMMAND, text="thank you"), 1.0, loud)
        (answer,) = [a for a in answers.take_actions() if isinstance(a, AnswerDue)]
        assert answer.result.intent is None and not answer.doubtful
        answers.conclude("u2", NOT_MADE_OUT, 2.0, loud)
        (answer,) = [a for a in answers.take_actions() if isinstance(a, AnswerDue)]
        assert answer.doubtful is loud


# --- through the app, as the satellite runs ------------------------------------------------

WHITE_20 = corpus.Room("white", 20.0)


def _through_the_app(config: Config, texts: list[str]) -> list[object]:
    """'okay nabu, turn on the kitchen light' in white noise 20 dB below, said twice
    again after it; the recognizer hears each take as the next of ``texts`` (the last
    kept), scored to be trusted and 0.78 sure (below ``stt.doubt_below_confidence``)."""
    voice = corpus.VOICES_CI[0]
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed")
    said = corpus.speak(voice, LIGHT_ON.text)
    parts = [synth.silence(1.0), corpus.speak(voice, robustness.WAKE_PHRASE), synth.silence(0.3)]
    parts += [said, synth.silence(1.5), said, synth.silence(1.5), said, synth.silence(2.0)]
    audio = robustness.on_floor(np.concatenate(parts), WHITE_20, 5, said)
    score = config.stt.rejection_threshold + config.stt.device_margin + 5.0
    _, done = converse(config, understanding_with(SaidInTurn(texts, score), config), audio)
    return list(done)


@pytest.mark.parametrize(
    ("setting", "replies", "acted"),
    [(True, ["say_again", "say_again"], ["HassTurnOn"]), (False, ["not_understood"], [])],
    ids=["asked-for", "setting-off"],
)
def test_through_the_app_the_request_not_made_out_is_heard_again(
    setting: bool, replies: list[str], acted: list[str]
) -> None:
    """The first take not made out, then the request heard doubtful twice: with the
    setting on the satellite asks for it, asks about it, and acts on the third take,
    each heard with no wake word; off, it says it did not understand and does not
    listen on."""
    config = validate({"stt": {"ask_again_not_understood": setting}})
    done = _through_the_app(config, [NOT_MADE_OUT.text, LIGHT_ON.text])
    said = [a.text for a in done if isinstance(a, ReplyRequested)]
    assert said[: len(replies)] == [REPLIES[r] for r in replies]
    assert [a.intent for a in done if isinstance(a, HaIntentRequested)] == acted
