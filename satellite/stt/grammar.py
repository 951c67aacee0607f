"""The speech grammar of the active intents: hassil's sentence templates walked into words.

Each template's expression tree is compiled into a ``WordGraph`` (Thompson construction),
which ``fsg.finish`` makes free of empty transitions and minimal. A slot list ({name},
{area}, {brightness}) is one placeholder arc in that graph; each list becomes a minimal
word network of its own (``fsg.word_network``), spliced into the minimal graph at its
placeholders (``fsg.splice``), and the result is minimised once more: the same minimal
graph as when the lists were expanded inside every template first, which made the graph,
the time and the memory grow with names x templates (300 names: 180k arcs, 2 s, 250 MB
to minimise). Branches that cannot be spoken are dropped: wildcard slots (free
text), empty slot lists, and words missing from the pronunciation dictionary (logged once).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..nlu.intents import IntentSet
from .fsg import (
    Fragment,
    Grammar,
    WordGraph,
    WordNetwork,
    finish,
    placeholder,
    splice,
    word_network,
)

if TYPE_CHECKING:
    from hassil.expression import Expression, ListReference
    from hassil.intents import IntentData

_LOGGER = logging.getLogger(__name__)
#: Permutations longer than this are not expanded (n! orders).
MAX_PERMUTATION_ITEMS = 4
#: A part of a template glued inside a word is spelled out when it has at most this
#: many spellings; larger ones are compiled word by word.
MAX_GLUED_TEXTS = 200
_SPLIT = re.compile(r"[^\w']+", re.UNICODE)
_SYMBOLS = {"%": " percent ", "&": " and ", "+": " plus ", "°": " degrees "}


class _Compiler:
    """hassil expression -> fragment of a WordGraph."""

    def __init__(
        self,
        intent_set: IntentSet,
        has_word: Callable[[str], bool],
        number_words: Callable[[int], list[str]],
        expand_lists: bool = False,
    ) -> None:
        self.set = intent_set
        #: Lists spelled out where they are referred to, instead of placeholder arcs.
        self.expand_lists = expand_lists
        self.has_word = has_word
        self.number_words = number_words
        self.graph = WordGraph()
        self.words: set[str] = set()
        self.oov: set[str] = set()
        self._rules_in_progress: set[str] = set()
        self._list_cache: dict[str, list[list[str]] | None] = {}

    def words_of(self, text: str) -> list[str] | None:
        """Normalise a text chunk to dictionary words; None when one is unknown."""
        for symbol, spoken in _SYMBOLS.items():
            text = text.replace(symbol, spoken)
        out: list[str] = []
        for raw in _SPLIT.split(text.lower()):
            token = raw.strip("'_")
            if not token:
                continue
            if token.isdigit():
                out.extend(self.number_words(int(token)))
                continue
            if not self.has_word(token):
                self.oov.add(token)
                return None
            out.append(token)
        self.words.update(out)
        return out

    def chain(self, words: list[str]) -> Fragment:
        start = state = self.graph.new()
        for word in words:
            nxt = self.graph.new()
            self.graph.arc(state, nxt, word)
            state = nxt
        return start, state

    def alternatives(self, fragments: list[Fragment | None], optional: bool) -> Fragment | None:
        live = [f for f in fragments if f is not None]
        if not live:
            return None
        start, end = self.graph.new(), self.graph.new()
        for a, b in live:
            self.graph.arc(start, a, None)
            self.graph.arc(b, end, None)
        if optional:
            self.graph.arc(start, end, None)
        return start, end

    def sequence(self, fragments: list[Fragment | None]) -> Fragment | None:
        if any(f is None for f in fragments):
            return None
        live = [f for f in fragments if f is not None]
        if not live:
            return self.chain([])
        for (_, end), (start, _) in itertools.pairwise(live):
            self.graph.arc(end, start, None)
        return live[0][0], live[-1][1]

    def expr(self, node: Expression) -> Fragment | None:
        from hassil.expression import (  # noqa: PLC0415
            Alternative,
            ListReference,
            Permutation,
            RuleReference,
            Sequence,
            TextChunk,
        )

        if isinstance(node, TextChunk):
            words = self.words_of(node.text)
            return None if words is None else self.chain(words)
        if isinstance(node, Alternative):
            return self.alternatives([self.expr(i) for i in node.items], node.is_optional)
        if isinstance(node, Permutation):
            items = node.items[:MAX_PERMUTATION_ITEMS]
            orders = [
                self.sequence([self.expr(i) for i in order])
                for order in itertools.permutations(items)
            ]
            return self.alternatives(orders, optional=False)
        if isinstance(node, Sequence):
            return self.sequence([self.cluster(c) for c in _glued_clusters(node.items)])
        if isinstance(node, RuleReference):
            return self.rule(node.rule_name)
        if isinstance(node, ListReference):
            options = self.list_options(node)
            if not options:
                return None
            if not self.expand_lists:
                start, end = self.graph.new(), self.graph.new()
                self.graph.arc(start, end, placeholder(node.list_name))
                return start, end
            return self.alternatives([self.chain(o) for o in options], optional=False)
        raise TypeError(f"Unsupported template expression {type(node).__name__}")

    def cluster(self, items: list[Expression]) -> Fragment | None:
        """One item, or items glued inside a word ("light[s]") spelled out in full."""
        if len(items) == 1:
            return self.expr(items[0])
        from hassil.expression import Sequence  # noqa: PLC0415
        from hassil.sample import sample_expression  # noqa: PLC0415

        texts = list(
            itertools.islice(
                sample_expression(
                    Sequence(items=items),
                    self.set.slot_lists,
                    self.set.intents.expansion_rules,
                    language=self.set.language,
                ),
                MAX_GLUED_TEXTS + 1,
            )
        )
        if len(texts) > MAX_GLUED_TEXTS:
            _LOGGER.debug("Too many spellings for a glued template part; compiled by words")
            return self.sequence([self.expr(i) for i in items])
        options = [w for w in (self.words_of(t) for t in set(texts)) if w is not None]
        return self.alternatives([self.chain(o) for o in options], optional=False)

    def rule(self, name: str) -> Fragment | None:
        rule = self.set.intents.expansion_rules.get(name)
        if rule is None or name in self._rules_in_progress:
            return None
        self._rules_in_progress.add(name)
        try:
            return self.expr(rule.expression)
        finally:
            self._rules_in_progress.discard(name)

    def networks(self) -> dict[str, WordNetwork]:
        """The word network of every slot list referred to so far."""
        return {name: word_network(o) for name, o in self._list_cache.items() if o}

    def list_options(self, ref: ListReference) -> list[list[str]] | None:
        """Word sequences of a slot list (cached per list)."""
        from hassil import RangeSlotList, TextSlotList  # noqa: PLC0415
        from hassil.expression import TextChunk  # noqa: PLC0415

        key = ref.list_name
        if key in self._list_cache:
            return self._list_cache[key]
        inline = ref.get_inline_range() if ref.is_inline_range else None
        slot_list = self.set.slot_lists.get(ref.list_name)
        options: list[list[str]] = []
        if inline is not None:
            start, stop, step = inline
            options = [self.number_words(n) for n in range(start, stop + 1, step)]
        elif isinstance(slot_list, RangeSlotList):
            options = [
                self.number_words(n)
                for n in range(slot_list.start, slot_list.stop + 1, slot_list.step)
            ]
        elif isinstance(slot_list, TextSlotList):
            for value in slot_list.values:
                if isinstance(value.text_in, TextChunk):
                    words = self.words_of(value.text_in.text)
                    if words:
                        options.append(words)
                else:
                    options.extend(_spell_out(self, value.text_in))
        unique = sorted({tuple(o) for o in options})
        result = [list(o) for o in unique] or None
        self._list_cache[key] = result
        return result


def _edge_text(node: Expression, last: bool) -> list[str]:
    """Texts at the left (or right) edge of an expression, for glue detection."""
    from hassil.expression import Group, TextChunk  # noqa: PLC0415
    from hassil.expression import Sequence as Seq  # noqa: PLC0415

    if isinstance(node, TextChunk):
        return [node.original_text]
    if isinstance(node, Seq):
        items = [i for i in node.items if not (isinstance(i, TextChunk) and i.is_empty)]
        return _edge_text(items[-1 if last else 0], last) if items else [""]
    if isinstance(node, Group):
        return [t for item in node.items for t in _edge_text(item, last)]
    return [" "]  # a list or rule reference stands as whole words


def _glued(left: Expression, right: Expression) -> bool:
    rights = [t for t in _edge_text(left, last=True) if t]
    lefts = [t for t in _edge_text(right, last=False) if t]
    return any(not r[-1].isspace() for r in rights) and any(not t[0].isspace() for t in lefts)


def _glued_clusters(items: list[Expression]) -> list[list[Expression]]:
    """Split a sequence into runs of items joined inside a word."""
    clusters: list[list[Expression]] = []
    for item in items:
        if clusters and _glued(clusters[-1][-1], item):
            clusters[-1].append(item)
        else:
            clusters.append([item])
    return clusters


def _spell_out(compiler: _Compiler, expression: Expression) -> list[list[str]]:
    """All word sequences of a small template (slot values like 'blind[s]')."""
    sub = _Compiler(compiler.set, compiler.has_word, compiler.number_words, expand_lists=True)
    fragment = sub.expr(expression)
    if fragment is None:
        return []
    grammar = finish(sub.graph, fragment, set(), set())
    paths: list[list[str]] = []

    def walk(state: int, words: list[str]) -> None:
        if len(paths) > 1000:
            return
        for src, dst, word in grammar.arcs:
            if src != state:
                continue
            if word is None:
                paths.append(words)
            else:
                walk(dst, [*words, word])

    walk(grammar.start, [])
    return [p for p in paths if p]


def build_grammar(
    intent_set: IntentSet,
    has_word: Callable[[str], bool],
    number_words: Callable[[int], list[str]],
    expand_lists: bool = False,
) -> Grammar:
    """Compile the active intents (with optional skip words around) into a Grammar.

    ``expand_lists``: spell every slot list out inside each template that refers to it
    (the same sentences; slow and large with many names, kept to test against).
    """
    compiler = _Compiler(intent_set, has_word, number_words, expand_lists)
    sentences: list[Fragment | None] = []
    domains = {entity.domain for entity in intent_set.entities}
    context = frozenset({"area"} if intent_set.area else ())
    for intent in intent_set.intents.intents.values():
        for data in intent.data:
            if not about_domains(data, domains, context):
                continue
            for sentence in data.sentences:
                sentences.append(compiler.expr(sentence.expression))
    body = compiler.alternatives(sentences, optional=False)
    if body is None:
        raise ValueError("No speakable sentence in the active intents")
    skips = [compiler.words_of(w) for w in intent_set.intents.skip_words]
    skip_options = [compiler.chain(w) for w in skips if w]
    before = compiler.alternatives(list(skip_options), optional=True) if skip_options else None
    after = (
        compiler.alternatives([compiler.chain(w) for w in skips if w], optional=True)
        if skip_options
        else None
    )
    whole = compiler.sequence([f for f in (before, body, after) if f is not None])
    assert whole is not None
    tell_left_out(intent_set, compiler.oov)
    spliced = splice(
        finish(compiler.graph, whole, compiler.words, compiler.oov), compiler.networks()
    )
    # Minimised once more, the decoder gets the one minimal graph of these sentences, as
    # when the lists were expanded: the spliced graph accepts the same sentences with
    # fewer arcs (a third to a half), but pocketsphinx searched it differently, and in a
    # loud room one more command in 62 came out as a wrong device action.
    minimal = finish(
        WordGraph(list(spliced.arcs), spliced.states),
        (spliced.start, spliced.final),
        compiler.words,
        compiler.oov,
    )
    return dataclasses.replace(
        minimal, graph_arcs=spliced.graph_arcs, list_sizes=spliced.list_sizes
    )


def tell_left_out(intent_set: IntentSet, oov: set[str]) -> None:
    """Log the words left out of the grammar for want of a pronunciation: a warning with
    the fix for HA's names and areas, the templates' own at debug level."""
    names = {w for e in intent_set.entities for w in e.name.lower().split()}
    names |= {w for a in intent_set.areas for w in a.lower().split()}
    if oov & names:
        _LOGGER.warning(
            "Names left out of the speech grammar: no pronunciation for %s. Fix: rename "
            "the entity or area in words the dictionary knows",
            ", ".join(sorted(oov & names)),
        )
    if oov - names:
        _LOGGER.debug("Template words without a pronunciation: %s", ", ".join(sorted(oov - names)))


def about_domains(
    data: IntentData, domains: set[str], context: frozenset[str] = frozenset()
) -> bool:
    """Whether a block of templates can be matched here: about a kind of device that
    exists (by domain), and needing no context the satellite does not give.

    HA's templates cover every kind of device ("is the garage door open", "raise the
    awnings"), and some take the area from the satellite's own ("turn on the lights",
    meaning here), which only a satellite with ``satellite.area`` set gives (``context``:
    the keys it gives). Blocks that cannot match only give other speech more sentences
    to be mistaken for.
    """
    required = data.requires_context or {}
    if any(key != "domain" and key not in context for key in required):
        return False
    wanted: set[str] = set()
    for source in (required, data.slots or {}):
        value = source.get("domain")
        if isinstance(value, str):
            wanted.add(value)
        elif isinstance(value, list | tuple):
            wanted.update(str(v) for v in value)
    return not wanted or bool(wanted & domains)
