"""A call for help the LLM reads from words the grammar search heard as another command
is confirmed before it goes out (nlu/trust.help_heard_otherwise).

With echo cancellation on, "turn on the kitchen light" said over the satellite's reply
was not believed, went to the fallback, was transcribed "carry on its own life", and the
LLM (biased towards help) made that a call for help: a high alert for a light. The two
readings of the one utterance disagree; the satellite now asks "Do you need help?".
Unanswered, the call still goes out, marked unconfirmed; a free phrasing of help the
grammar heard as no command goes out at once, as before.

The real LLM reads the words; the free transcriber's mishearing is given (it cannot be
made on demand).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from satellite.actions import AnswerDue, ListenAgain, ReplyRequested
from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.events import UtteranceEnded
from satellite.nlu.events import HelpRequested
from satellite.nlu.fallback import FallbackJobs
from satellite.nlu.help_answers import HelpQuestion
from satellite.nlu.intents import CARE_INTENTS
from satellite.nlu.llm import LlmFallback
from satellite.nlu.recognizer import IntentResult
from satellite.nlu.settings import LlmSettings
from satellite.stt.base import SttResult
from satellite.understanding.answers import Answers
from satellite.understanding.dialogue import REPLIES, Dialogue
from tests.understand import need_llm

MISHEARD = "carry on its own life"
ACTIVE = ("HassTurnOn", "HassTurnOff", "HassNevermind", *CARE_INTENTS)
AUDIO = AudioChunk(16000, 2, 1, bytes(3200), 0.0)


@pytest.fixture(scope="module")
def fallback() -> Iterator[LlmFallback]:
    need_llm()
    fallback = LlmFallback(LlmSettings(), "en", ACTIVE)
    assert fallback.available
    yield fallback
    fallback.close(wait=True)


def _concluded(fallback: LlmFallback, grammar_heard: IntentResult, config: Config) -> AnswerDue:
    """The answer owed when the grammar search heard ``grammar_heard`` (not believed)
    and the free transcriber heard ``MISHEARD``."""
    answers = Answers(config.stt, FallbackJobs(fallback, lambda _: MISHEARD), HelpQuestion())
    utterance = UtteranceEnded(
        timestamp_seconds=5.0,
        utterance_id="u1",
        start_seconds=3.0,
        end_seconds=4.5,
        audio_start_seconds=2.8,
        reason="silence",
        audio=AUDIO,
    )
    answers.report(utterance)
    stt = SttResult(grammar_heard.text, 0.4, in_grammar=False, score_per_frame=-20.0)
    assert answers.settle(utterance, stt, grammar_heard, trusted=False) == []
    answers.collect(6.0, wait_seconds=60.0, loud=False)
    (due,) = [a for a in answers.take_actions() if isinstance(a, AnswerDue)]
    assert (due.result.intent, due.result.source) == ("CallForHelp", "llm"), due.result
    return due


def test_a_command_the_llm_reads_as_help_is_confirmed_first(fallback: LlmFallback) -> None:
    config = Config()
    light = IntentResult("HassTurnOn", {"name": "kitchen light"}, text="turn on kitchen light")
    due = _concluded(fallback, light, config)
    assert due.doubtful
    dialogue = Dialogue()
    asked = dialogue.handle(due.result, "u1", 6.0, due.doubtful)
    assert not [e for e in asked if isinstance(e, HelpRequested)]
    said = [e.text for e in asked if isinstance(e, ReplyRequested)]
    assert said == [REPLIES["confirm_help"]]
    assert [e for e in asked if isinstance(e, ListenAgain)]
    # nobody answers: the call still goes out, unconfirmed
    (alert,) = [e for e in dialogue.tick(30.0, hearing=False) if isinstance(e, HelpRequested)]
    assert alert.severity != "high" and alert.text == MISHEARD


def test_help_the_grammar_heard_as_nothing_goes_out_at_once(fallback: LlmFallback) -> None:
    due = _concluded(fallback, IntentResult(None, text=""), Config())
    assert not due.doubtful
    (alert,) = [e for e in Dialogue().handle(due.result, "u1", 6.0) if isinstance(e, HelpRequested)]
    assert alert.severity == "high"


def test_the_confirmation_can_be_switched_off(fallback: LlmFallback) -> None:
    config = Config()
    stt = dataclasses.replace(config.stt, confirm_help_heard_otherwise=False)
    config = dataclasses.replace(config, stt=stt)
    light = IntentResult("HassTurnOn", {"name": "kitchen light"}, text="turn on kitchen light")
    assert not _concluded(fallback, light, config).doubtful
