"""A call for help the LLM reads from free speech with no word of help or distress in it
is confirmed before it goes out (nlu/trust.free_help, ``stt.confirm_free_help``).

The LLM is biased towards help, and reads it into what is no call: chit-chat ("I could
not sleep well last night"), misheard speech, and a command said over the satellite's
reply that was transcribed "carry on its own life". The satellite asks "Do you need
help? Say help again if you do."; "yes" sends it at once, confirmed, and no answer still
sends it, marked unconfirmed: never lost. A free call with an unmistakable word ("I've
fallen", "pain") goes out at once, and a call the templates know ("help me") is held to
the room's rules only.

The real LLM reads the words; what the free transcriber heard is given (a mishearing
cannot be made on demand).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence

import pytest

from satellite.actions import AnswerDue, ListenAgain, ReplyRequested
from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.events import UtteranceEnded
from satellite.nlu.events import HelpRequested
from satellite.nlu.fallback import FallbackJobs
from satellite.nlu.help_answers import ANSWER_YES, HelpQuestion
from satellite.nlu.intents import CARE_INTENTS
from satellite.nlu.llm import LlmFallback, Prompt
from satellite.nlu.recognizer import IntentResult, TemplateRecognizer
from satellite.nlu.settings import LlmSettings
from satellite.stt.base import SttResult
from satellite.stt.factory import configured_intent_set
from satellite.understanding.answers import Answers
from satellite.understanding.dialogue import REPLIES, Dialogue
from tests.understand import commands, lines, need_llm

ACTIVE = ("HassTurnOn", "HassTurnOff", "HassNevermind", *CARE_INTENTS)
AUDIO = AudioChunk(16000, 2, 1, bytes(3200), 0.0)
MISHEARD = "carry on its own life"
FALLEN = "i've fallen and i can't get up"
UNSAFE = "please come i don't feel safe"


@pytest.fixture(scope="module")
def fallback() -> Iterator[LlmFallback]:
    need_llm()
    fallback = LlmFallback(LlmSettings(), "en", ACTIVE)
    assert fallback.available
    yield fallback
    fallback.close(wait=True)


def _concluded(fallback: LlmFallback, heard: str, config: Config) -> AnswerDue:
    """The answer owed to an utterance the grammar search did not believe and the free
    transcriber heard as ``heard``."""
    answers = Answers(config.stt, FallbackJobs(fallback, lambda _: heard), HelpQuestion())
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
    grammar = IntentResult("HassTurnOn", {"name": "kitchen light"}, text="turn on kitchen light")
    stt = SttResult(grammar.text, 0.4, in_grammar=False, score_per_frame=-20.0)
    assert answers.settle(utterance, stt, grammar, trusted=False) == []
    answers.collect(6.0, wait_seconds=60.0, loud=False)
    (due,) = [a for a in answers.take_actions() if isinstance(a, AnswerDue)]
    assert (due.result.intent, due.result.source) == ("CallForHelp", "llm"), due.result
    return due


def _alerts(events: Sequence[object]) -> list[HelpRequested]:
    return [e for e in events if isinstance(e, HelpRequested)]


def test_a_misheard_command_the_llm_reads_as_help_is_asked_about(fallback: LlmFallback) -> None:
    due = _concluded(fallback, MISHEARD, Config())
    assert due.doubtful
    dialogue = Dialogue()
    asked = dialogue.handle(due.result, "u1", 6.0, due.doubtful)
    assert not _alerts(asked)
    assert [e.text for e in asked if isinstance(e, ReplyRequested)] == [REPLIES["confirm_help"]]
    assert [e for e in asked if isinstance(e, ListenAgain)]
    # nobody answers: the call still goes out, unconfirmed
    (alert,) = _alerts(dialogue.tick(30.0, hearing=False))
    assert alert.severity != "high" and alert.text == MISHEARD


def test_a_free_call_with_a_word_of_distress_goes_out_at_once(fallback: LlmFallback) -> None:
    due = _concluded(fallback, FALLEN, Config())
    assert due.result.unmistakable and not due.doubtful
    (alert,) = _alerts(Dialogue().handle(due.result, "u1", 6.0))
    assert alert.severity == "high"


def test_a_free_call_without_one_confirmed_goes_out_at_once(fallback: LlmFallback) -> None:
    due = _concluded(fallback, UNSAFE, Config())
    assert due.doubtful
    dialogue = Dialogue()
    assert not _alerts(dialogue.handle(due.result, "u1", 6.0, due.doubtful))
    (alert,) = _alerts(dialogue.handle(IntentResult(ANSWER_YES, text="yes"), "u2", 9.0))
    assert alert.severity == "high"


def test_the_confirmation_can_be_switched_off(fallback: LlmFallback) -> None:
    config = Config()
    config = dataclasses.replace(
        config, stt=dataclasses.replace(config.stt, confirm_free_help=False)
    )
    due = _concluded(fallback, MISHEARD, config)
    assert not due.doubtful
    (alert,) = _alerts(Dialogue().handle(due.result, "u1", 6.0))
    assert alert.severity == "high"


def test_a_call_the_templates_know_is_not_asked_about_in_a_quiet_room() -> None:
    answers = Answers(Config().stt, None, HelpQuestion())
    answers.conclude("u1", IntentResult("CallForHelp", {}, 0.99, text="help me"), 2.0)
    (due,) = [a for a in answers.take_actions() if isinstance(a, AnswerDue)]
    assert due.result.intent == "CallForHelp" and not due.doubtful


def test_the_unmistakable_words_are_no_word_of_chit_chat_or_the_commands() -> None:
    """None of the prompt's unmistakable words is in the other commands or in the
    out-of-domain sentences (a symptom said in passing is asked about)."""
    words = Prompt.load("en").unmistakable
    assert {"help", "pain", "fallen", "breathe", "choking"} <= words
    said = [text for text, intent, _ in commands() if intent != "CallForHelp"]
    said += lines("out_of_domain.txt")
    assert not [t for t in said if words & set(re.findall(r"[a-z']+", t.lower()))]


@pytest.mark.parametrize("heard", ["be quiet", "i'm fine", "sorry"])
def test_a_command_or_no_command_the_llm_reads_as_help_is_not_a_call(
    fallback: LlmFallback, heard: str
) -> None:
    """Transcribed word for word, "be quiet" (a Stop command), "I'm fine" and "sorry"
    (things said that are no command) are read by the LLM as calls for help; their words
    are the templates' and no call: not understood."""
    assert fallback.classify(heard, timeout_seconds=60.0).intent == "CallForHelp"
    assert _worked_out(fallback, heard).intent is None


@pytest.mark.parametrize("heard", [UNSAFE, FALLEN])
def test_a_free_call_is_still_a_call_beside_the_templates(
    fallback: LlmFallback, heard: str
) -> None:
    assert _worked_out(fallback, heard).intent == "CallForHelp"


def _worked_out(fallback: LlmFallback, heard: str) -> IntentResult:
    """What the fallback's job makes of an utterance transcribed ``heard``, its words read
    by the default templates too, as the satellite's are."""
    templates = TemplateRecognizer(configured_intent_set(Config().nlu, "en", None))
    jobs = FallbackJobs(fallback, lambda _: heard, templates)
    jobs.submit("u1", AUDIO, heard, {})
    ((_, result),) = list(jobs.collect(wait_seconds=60.0))
    return result
