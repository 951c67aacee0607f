"""The answers' grammar (nlu/help_answers.py) compiled for the recognizer, and added to
a pocketsphinx decoder as a search of its own beside the commands'; and the help check's
(CallForHelp's sentences beside the things said that are no command: "yes", "no
thanks"), which a call for help heard with the commands' grammar is searched again with
(understanding/belief.py).

Each is a handful of sentences: compiled in a few milliseconds at each start, not kept
with the commands' grammars. Their words are added to a decoder's dictionary where it
lacks them (it holds only the commands' words).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..nlu.help_answers import answer_intent_set, help_check_intent_set
from ..nlu.intents import IntentSet
from .fsg import Grammar, cached_grammar
from .grammar import build_grammar
from .lexicon import default_dictionary, dictionary_words, number_words

#: The name of the answers' search in a decoder.
ANSWERS_SEARCH = "answers"
#: The name of the help check's search in a decoder.
CHECK_SEARCH = "help_check"


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


def answer_grammar(language: str, cache_dir: str) -> AnswerGrammar:
    """The answers' and the help check's grammars for ``language``, their FSGs written to
    ``cache_dir`` (again if the cache was pruned since: see built.py)."""
    grammar, check, phones = _compiled(language)
    cache = Path(cache_dir).expanduser()
    return AnswerGrammar(
        grammar, cached_grammar(grammar, cache), phones, check, cached_grammar(check, cache)
    )


@functools.lru_cache(maxsize=4)
def _compiled(language: str) -> tuple[Grammar, Grammar, tuple[tuple[str, str], ...]]:
    """The answers' and the help check's grammars and the phones of their words (once
    per process)."""
    words = dictionary_words(default_dictionary(language))

    def build(intent_set: IntentSet) -> Grammar:
        return build_grammar(intent_set, words.__contains__, lambda n: number_words(n, language))

    grammar = build(answer_intent_set(language))
    check = build(help_check_intent_set(language))
    phones = []
    for word in sorted(grammar.words | check.words):
        spelled = words.phones(word)
        if spelled:
            phones.append((word, " ".join(spelled)))
    return grammar, check, tuple(phones)


def add_answers(decoder: Any, answers: AnswerGrammar) -> None:
    """Add the answers' and the help check's searches to ``decoder`` (not activated), and
    their words to the decoder's dictionary where they are missing."""
    missing = [(w, p) for w, p in answers.phones if decoder.lookup_word(w) is None]
    for index, (word, phones) in enumerate(missing):
        decoder.add_word(word, phones, index == len(missing) - 1)
    decoder.add_fsg(ANSWERS_SEARCH, decoder.read_fsg(os.fspath(answers.path)))
    if answers.check_path is not None:
        decoder.add_fsg(CHECK_SEARCH, decoder.read_fsg(os.fspath(answers.check_path)))


class AnswerSearches:
    """Which grammar a recognizer's grammar decoders search: the commands' (their own
    search), the answers' (``ANSWERS_SEARCH``, added to each), or for a search aside the
    help check's (``CHECK_SEARCH``, while ``checking``)."""

    def __init__(self, commands: Grammar, decoders: tuple[Any, ...], answers: AnswerGrammar | None):
        self.commands = commands
        self.answers = answers
        #: The name of the commands' search (the same in every decoder: its default).
        self._commands = decoders[0].current_search()
        if answers is not None:
            for decoder in decoders:
                add_answers(decoder, answers)
        #: Whether the answers' grammar is searched now.
        self.on = False
        #: Whether the help check's grammar is searched now (a search aside: belief.py).
        self.checking = False

    @property
    def can_check(self) -> bool:
        """Whether the decoders hold the help check's search."""
        return self.answers is not None and self.answers.check is not None

    def hear(self, answers: bool) -> bool:
        """Search the answers' grammar (True) or the commands'; whether it is searched."""
        self.on = answers and self.answers is not None
        return self.on

    def grammar(self) -> Grammar:
        """The grammar searched now."""
        if self.answers is None:
            return self.commands
        if self.checking and self.answers.check is not None:
            return self.answers.check
        return self.answers.grammar if self.on else self.commands

    def start(self, decoder: Any) -> None:
        """Start an utterance on ``decoder``, searching the grammar searched now (after its
        features are started: taking a mean activates a search of its own)."""
        if self.checking and self.can_check:
            decoder.activate_search(CHECK_SEARCH)
        else:
            decoder.activate_search(ANSWERS_SEARCH if self.on else self._commands)
        decoder.start_utt()
