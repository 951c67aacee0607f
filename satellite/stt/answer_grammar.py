"""The answers' grammar (nlu/help_answers.py) compiled for the recognizer, and added to
a pocketsphinx decoder as a search of its own beside the commands'.

The answers are a handful of sentences: compiled in a few milliseconds at each start, not
kept with the commands' grammars. Their words are added to a decoder's dictionary where
it lacks them (it holds only the commands' words).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..nlu.help_answers import answer_intent_set
from .fsg import Grammar, cached_grammar
from .grammar import build_grammar
from .lexicon import default_dictionary, dictionary_words, number_words

#: The name of the answers' search in a decoder.
ANSWERS_SEARCH = "answers"


@dataclass(frozen=True, slots=True)
class AnswerGrammar:
    """The answers' grammar, its FSG file and the pronunciations of its words."""

    grammar: Grammar
    path: Path
    #: Each word's phones (its own line of the dictionary).
    phones: tuple[tuple[str, str], ...]


def answer_grammar(language: str, cache_dir: str) -> AnswerGrammar:
    """The answers' grammar for ``language``, its FSG written to ``cache_dir`` (again if
    the cache was pruned since: see built.py)."""
    grammar, phones = _compiled(language)
    return AnswerGrammar(grammar, cached_grammar(grammar, Path(cache_dir).expanduser()), phones)


@functools.lru_cache(maxsize=4)
def _compiled(language: str) -> tuple[Grammar, tuple[tuple[str, str], ...]]:
    """The answers' grammar and the phones of its words (once per process)."""
    words = dictionary_words(default_dictionary(language))
    grammar = build_grammar(
        answer_intent_set(language), words.__contains__, lambda n: number_words(n, language)
    )
    phones = []
    for word in sorted(grammar.words):
        spelled = words.phones(word)
        if spelled:
            phones.append((word, " ".join(spelled)))
    return grammar, tuple(phones)


def add_answers(decoder: Any, answers: AnswerGrammar) -> None:
    """Add the answers' search to ``decoder`` (not activated), and its words to the
    decoder's dictionary where they are missing."""
    missing = [(w, p) for w, p in answers.phones if decoder.lookup_word(w) is None]
    for index, (word, phones) in enumerate(missing):
        decoder.add_word(word, phones, index == len(missing) - 1)
    decoder.add_fsg(ANSWERS_SEARCH, decoder.read_fsg(os.fspath(answers.path)))


class AnswerSearches:
    """Which grammar a recognizer's grammar decoders search: the commands' (their own
    search) or the answers' (``ANSWERS_SEARCH``, added to each)."""

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

    def hear(self, answers: bool) -> bool:
        """Search the answers' grammar (True) or the commands'; whether it is searched."""
        self.on = answers and self.answers is not None
        return self.on

    def grammar(self) -> Grammar:
        """The grammar searched now."""
        return self.answers.grammar if self.on and self.answers is not None else self.commands

    def start(self, decoder: Any) -> None:
        """Start an utterance on ``decoder``, searching the grammar searched now (after its
        features are started: taking a mean activates a search of its own)."""
        decoder.activate_search(ANSWERS_SEARCH if self.on else self._commands)
        decoder.start_utt()
