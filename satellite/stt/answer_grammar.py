"""The answers' grammar (nlu/help_answers.py) compiled for the recognizer, and added to
a pocketsphinx decoder as a search of its own beside the commands'; and the help check's
(CallForHelp's sentences beside the things said that are no command: "yes", "no
thanks"), which a call for help heard with the commands' grammar is searched again with
(understanding/belief.py); the help confirmation's (CallForHelp's sentences beside all
that is no command, "nope" and "oh" too), which a call the help check heard again is
searched once more with; and the short check's, made for each check: the sentence
the commands' search heard beside the not-commands, which any other intent heard from a
word or two is searched again with (understanding/short_check.py).

Each is a handful of sentences: compiled in a few milliseconds at each start, not kept
with the commands' grammars. Their words are added to a decoder's dictionary where it
lacks them (it holds only the commands' words).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..nlu.help_answers import (
    answer_intent_set,
    help_check_intent_set,
    help_confirm_intent_set,
    no_command_intent_set,
)
from ..nlu.intents import IntentSet, fillers, greetings, not_commands
from .fsg import Grammar, cached_grammar
from .grammar import build_grammar
from .lexicon import default_dictionary, dictionary_words, number_words
from .steps import Steps, around

T = TypeVar("T")

#: The name of the answers' search in a decoder.
ANSWERS_SEARCH = "answers"
#: The name of the help check's search in a decoder.
CHECK_SEARCH = "help_check"
#: The name of the help confirmation's search in a decoder.
CONFIRM_SEARCH = "help_confirm"
#: The name of the short check's search (made for each check).
SHORT_CHECK_SEARCH = "short_check"


@dataclass(frozen=True, slots=True)
class AnswerGrammar:
    """The answers' grammar, its FSG file and the pronunciations of its words."""

    grammar: Grammar
    path: Path
    #: Each word's phones (its own line of the dictionary), the help check's included.
    phones: tuple[tuple[str, str], ...]
    #: The help check's grammar and its FSG file.
    check: Grammar | None = None
    check_path: Path | None = None
    #: The not-commands, greetings and fillers (beside a sentence heard for the short
    #: check).
    not_commands: Grammar | None = None
    #: The help confirmation's grammar and its FSG file.
    confirm: Grammar | None = None
    confirm_path: Path | None = None


def answer_grammar(language: str, cache_dir: str) -> AnswerGrammar:
    """The answers' and the help check's grammars for ``language``, their FSGs written to
    ``cache_dir`` (again if the cache was pruned since: see built.py)."""
    grammar, check, not_commands, confirm, phones = _compiled(language)
    cache = Path(cache_dir).expanduser()
    return AnswerGrammar(
        grammar,
        cached_grammar(grammar, cache),
        phones,
        check,
        cached_grammar(check, cache),
        not_commands,
        confirm,
        cached_grammar(confirm, cache),
    )


@functools.lru_cache(maxsize=4)
def _compiled(
    language: str,
) -> tuple[Grammar, Grammar, Grammar, Grammar, tuple[tuple[str, str], ...]]:
    """The answers', the help check's, the not-commands' and the help confirmation's
    grammars and the phones of their words (once per process)."""
    words = dictionary_words(default_dictionary(language))

    def build(intent_set: IntentSet) -> Grammar:
        return build_grammar(intent_set, words.__contains__, lambda n: number_words(n, language))

    grammar = build(answer_intent_set(language))
    check = build(help_check_intent_set(language))
    not_commands = build(short_check_intent_set(language))
    confirm = build(help_confirm_intent_set(language))
    phones = []
    for word in sorted(grammar.words | check.words | not_commands.words | confirm.words):
        spelled = words.phones(word)
        if spelled:
            phones.append((word, " ".join(spelled)))
    return grammar, check, not_commands, confirm, tuple(phones)


def short_check_intent_set(language: str) -> IntentSet:
    """The things said that are no command, the greetings and the fillers ("oh", "hmm")
    (``NOT_A_COMMAND``): what the short check puts beside the sentence heard
    (understanding/short_check.py)."""
    said = [*not_commands(language), *greetings(language), *fillers(language)]
    return no_command_intent_set(language, said, call=False)


def beside(sentence: Sequence[str], other: Grammar) -> Grammar:
    """One grammar of the word sequence ``sentence`` and the sentences of ``other``: the
    sentence's words are a chain from ``other``'s start to its final state."""
    arcs = list(other.arcs)
    states = other.states
    state = other.start
    for index, word in enumerate(sentence):
        last = index == len(sentence) - 1
        following = other.final if last else states
        if not last:
            states += 1
        arcs.append((state, following, word))
        state = following
    return Grammar(states, other.start, other.final, arcs, other.words | set(sentence), other.oov)


def add_answers(decoder: Any, answers: AnswerGrammar) -> None:
    """Add the answers', the help check's and the help confirmation's searches to
    ``decoder`` (not activated), and their words to the decoder's dictionary where they
    are missing."""
    missing = [(w, p) for w, p in answers.phones if decoder.lookup_word(w) is None]
    for index, (word, phones) in enumerate(missing):
        decoder.add_word(word, phones, index == len(missing) - 1)
    decoder.add_fsg(ANSWERS_SEARCH, decoder.read_fsg(os.fspath(answers.path)))
    if answers.check_path is not None:
        decoder.add_fsg(CHECK_SEARCH, decoder.read_fsg(os.fspath(answers.check_path)))
    if answers.confirm_path is not None:
        decoder.add_fsg(CONFIRM_SEARCH, decoder.read_fsg(os.fspath(answers.confirm_path)))


class AnswerSearches:
    """Which grammar a recognizer's grammar decoders search: the commands' (their own
    search), the answers' (``ANSWERS_SEARCH``, added to each), or for a search aside one
    of the checks' (``CHECK_SEARCH``, ``CONFIRM_SEARCH`` or ``SHORT_CHECK_SEARCH``, while
    ``checking``)."""

    def __init__(self, commands: Grammar, decoders: tuple[Any, ...], answers: AnswerGrammar | None):
        self.commands = commands
        self.answers = answers
        #: The name of the commands' search (the same in every decoder: its default).
        self._commands = decoders[0].current_search()
        #: The short check's grammar (``check_short``).
        self.short: Grammar | None = None
        if answers is not None:
            for decoder in decoders:
                add_answers(decoder, answers)
        #: Whether the answers' grammar is searched now.
        self.on = False
        #: The check's search searched now (a search aside: belief.py), if any.
        self.checking: str | None = None

    @property
    def can_check(self) -> bool:
        """Whether the decoders hold the help check's search."""
        return self.answers is not None and self.answers.check is not None

    @property
    def can_confirm(self) -> bool:
        """Whether the decoders hold the help confirmation's search."""
        return self.answers is not None and self.answers.confirm is not None

    def check_short(self, sentence: Sequence[str]) -> bool:
        """Search the short check's grammar, the word sequence ``sentence`` beside the
        not-commands, while ``checking`` it; whether it can be searched."""
        if self.answers is None or self.answers.not_commands is None or not sentence:
            return False
        self.short = beside(sentence, self.answers.not_commands)
        self.checking = SHORT_CHECK_SEARCH
        return True

    def held(self, steps: Steps[T]) -> Steps[T]:
        """``steps`` of a search aside, the check searched now (``checking`` and its short
        grammar) held only while each is done: between them the commands' (or answers')
        grammar is searched, for the work done meanwhile (a check begun early gives way
        to it, stt/steps.py); closed, it closes ``steps``."""
        checking, short = self.checking, self.short

        def hold() -> None:
            self.checking, self.short = checking, short

        def let_go() -> None:
            self.checking = None

        return around(steps, hold, let_go)

    def hear(self, answers: bool) -> bool:
        """Search the answers' grammar (True) or the commands'; whether it is searched."""
        self.on = answers and self.answers is not None
        return self.on

    def grammar(self) -> Grammar:
        """The grammar searched now."""
        if self.answers is None:
            return self.commands
        if self.checking == CHECK_SEARCH and self.answers.check is not None:
            return self.answers.check
        if self.checking == CONFIRM_SEARCH and self.answers.confirm is not None:
            return self.answers.confirm
        if self.checking == SHORT_CHECK_SEARCH and self.short is not None:
            return self.short
        return self.answers.grammar if self.on else self.commands

    def start(self, decoder: Any) -> None:
        """Start an utterance on ``decoder``, searching the grammar searched now (after its
        features are started: taking a mean activates a search of its own)."""
        if self.checking == SHORT_CHECK_SEARCH and self.short is not None:
            short = self.short
            arcs = [
                (src, dst, 1.0, word) if word else (src, dst, 1.0) for src, dst, word in short.arcs
            ]
            fsg = decoder.create_fsg(SHORT_CHECK_SEARCH, short.start, short.final, arcs)
            decoder.add_fsg(SHORT_CHECK_SEARCH, fsg)
        if self.checking is not None:
            decoder.activate_search(self.checking)
        else:
            decoder.activate_search(ANSWERS_SEARCH if self.on else self._commands)
        decoder.start_utt()
