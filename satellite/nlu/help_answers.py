"""The answers to the help question, and the intents they are heard as.

When a call for help is doubtful the dialogue asks "Do you need help? Say help again if
you do" and listens without the wake word. The commands' grammar has no "yes" or "no"
(HA's templates do not, and they must not become commands), so while that question is
open the recognizer searches a small grammar of its own instead: the answers in
``help_answers_<language>.yaml`` (``AnswerYes``, ``AnswerNo``) and ``CallForHelp``'s
sentences from the care intents (help asked for again, in any words). Outside the
question nothing hears these sentences, and the dialogue takes an answer intent only
while the question is open.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .intents import (
    NOT_A_COMMAND,
    IntentSet,
    UnknownLanguageError,
    care_intents_yaml,
    greetings,
    like_a_call,
    not_commands,
)
from .recognizer import IntentResult

_DIR = Path(__file__).resolve().parent

#: "yes", "yes please", "I do": help is wanted.
ANSWER_YES = "AnswerYes"
#: "no", "no thanks", "I'm fine", "never mind": it is not.
ANSWER_NO = "AnswerNo"
ANSWER_INTENTS = frozenset({ANSWER_YES, ANSWER_NO})
#: The care intent heard among the answers (help asked for again).
HELP = "CallForHelp"


def answers_yaml(language: str) -> dict[str, Any]:
    """The answer templates for ``language``, with CallForHelp's from the care intents."""
    short = language.split("_", maxsplit=1)[0]
    path = _DIR / f"help_answers_{short}.yaml"
    if not path.is_file():
        raise UnknownLanguageError(
            f"No answers to the help question for language {language!r}. Fix: set "
            f"satellite.language to one of: "
            f"{', '.join(sorted(p.stem[13:] for p in _DIR.glob('help_answers_*.yaml')))}"
        )
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["intents"][HELP] = care_intents_yaml(language)["intents"][HELP]
    return data


def answer_intent_set(language: str) -> IntentSet:
    """The answers as an intent set (no slots, no skip words: "please" is an answer)."""
    import hassil  # noqa: PLC0415  (installed with the satellite; intents.py says which)

    data = answers_yaml(language)
    intents = hassil.Intents.from_dict(data)
    names = tuple(sorted(intents.intents))
    return IntentSet(language, intents, dict(intents.slot_lists), names)


def no_command_intent_set(language: str, said: list[str], call: bool) -> IntentSet:
    """The templates ``said`` as ``NOT_A_COMMAND``, beside CallForHelp's sentences when
    ``call``: the grammars things heard are searched again with, to tell what is no
    command from a call or from the sentence heard (stt/answer_grammar.py)."""
    import hassil  # noqa: PLC0415  (installed with the satellite; intents.py says which)

    intents: dict[str, Any] = {NOT_A_COMMAND: {"data": [{"sentences": said}]}}
    if call:
        intents = {HELP: care_intents_yaml(language)["intents"][HELP], **intents}
    data = {"language": language.split("_", maxsplit=1)[0], "intents": intents}
    made = hassil.Intents.from_dict(data)
    return IntentSet(language, made, dict(made.slot_lists), tuple(intents))


def help_check_intent_set(language: str) -> IntentSet:
    """CallForHelp's sentences beside the things said that are no command ("yes", "no
    thanks", ...: ``NOT_A_COMMAND``): the grammar a call for help heard with the
    commands' grammar (which has no "yes") is searched again with, to tell a bare "yes"
    from a call (understanding/belief.py)."""
    return no_command_intent_set(language, list(not_commands(language)), call=True)


def help_confirm_intent_set(language: str) -> IntentSet:
    """CallForHelp's sentences beside everything short said that is no command: the
    not-commands, the greetings and what sounds like part of a call ("nope", "oh": the
    care intents' ``like_a_call``). A call the help check heard again is searched once
    more with these (understanding/short_check.py): heard as no call there, it is asked
    about, never dropped, so words too like a call for the help check can be here."""
    said = [*not_commands(language), *greetings(language), *like_a_call(language)]
    return no_command_intent_set(language, said, call=True)


class HelpQuestion:
    """What the dialogue asked and awaits an answer to: whether the help question is open
    (understanding hears an utterance that begins while it is open with the answers'
    grammar) and which other request it asked to hear again ("Sorry, say that again":
    understanding believes that request heard again with less score, see
    understanding/answers.py). The dialogue sets both; one object shared by the two
    (``Understanding.question``, ``Dialogue(question=...)``)."""

    __slots__ = ("asked", "open")

    def __init__(self) -> None:
        self.open = False
        self.asked: IntentResult | None = None
