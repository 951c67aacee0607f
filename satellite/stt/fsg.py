"""The word graph that pocketsphinx searches, written in its FSG text format.

A template walker (``grammar.py``) builds a ``WordGraph`` with empty transitions
(Thompson construction); ``finish`` removes them and minimises the graph into a
``Grammar``, which ``cached_grammar`` writes for the decoder. The empty transitions must
go: pocketsphinx takes the transitive closure of every null transition in an FSG, which
for HA's templates turned 7.5k word arcs into 125k arcs and made a JSGF of a dozen
intents take minutes and gigabytes to load.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..files import replace_atomically, touch

#: A piece of a WordGraph: its start and end state.
Fragment = tuple[int, int]


@dataclass
class WordGraph:
    """States and arcs; an arc's word is None for an empty transition."""

    arcs: list[tuple[int, int, str | None]] = field(default_factory=list)
    states: int = 0

    def new(self) -> int:
        self.states += 1
        return self.states - 1

    def arc(self, src: int, dst: int, word: str | None) -> None:
        self.arcs.append((src, dst, word))


@dataclass
class Grammar:
    """An epsilon-free word graph, ready to write as a pocketsphinx FSG."""

    states: int
    start: int
    final: int
    arcs: list[tuple[int, int, str | None]]
    words: set[str]
    oov: set[str]
    #: Arcs of the template graph that was minimised (slot lists not spliced in yet).
    graph_arcs: int = 0
    #: Word sequences of each slot list spliced in ({"name": 300, "area": 20, ...}).
    list_sizes: dict[str, int] = field(default_factory=dict)
    _next: dict[int, dict[str | None, list[int]]] | None = field(default=None, repr=False)

    @property
    def fsg(self) -> str:
        """The graph in pocketsphinx's FSG text format."""
        lines = [
            "FSG_BEGIN commands",
            f"NUM_STATES {self.states}",
            f"START_STATE {self.start}",
            f"FINAL_STATE {self.final}",
        ]
        for src, dst, word in self.arcs:
            lines.append(f"TRANSITION {src} {dst} 1.0" + (f" {word}" if word else ""))
        lines.append("FSG_END")
        return "\n".join(lines) + "\n"

    @property
    def digest(self) -> str:
        """Stable id of the grammar (cache key)."""
        return hashlib.sha256(self.fsg.encode("utf-8")).hexdigest()[:16]

    @property
    def word_arcs(self) -> int:
        """Transitions that carry a word."""
        return sum(1 for arc in self.arcs if arc[2])

    def accepts(self, words: list[str]) -> bool:
        """True when the word sequence is a complete sentence of the grammar."""
        if self._next is None:
            self._next = {}
            for src, dst, word in self.arcs:
                self._next.setdefault(src, {}).setdefault(word, []).append(dst)
        states = self._closure({self.start})
        for word in words:
            states = self._closure({d for s in states for d in self._next.get(s, {}).get(word, ())})
            if not states:
                return False
        return self.final in states

    def _closure(self, states: set[int]) -> set[int]:
        """``states`` and those reached from them by empty transitions."""
        assert self._next is not None
        out, stack = set(states), list(states)
        while stack:
            for dst in self._next.get(stack.pop(), {}).get(None, ()):
                if dst not in out:
                    out.add(dst)
                    stack.append(dst)
        return out


def finish(graph: WordGraph, fragment: Fragment, words: set[str], oov: set[str]) -> Grammar:
    """The part of ``graph`` from ``fragment``'s start to its end as a Grammar: empty
    transitions removed, then minimised; one final state. ``words`` and ``oov`` are
    kept on it (the words it was built from, those left out for want of a
    pronunciation)."""
    start, final = fragment
    outgoing: dict[int, list[tuple[int, str | None]]] = {}
    for src, dst, word in graph.arcs:
        outgoing.setdefault(src, []).append((dst, word))

    closure_cache: dict[int, set[int]] = {}

    def closure(state: int) -> set[int]:
        if state in closure_cache:
            return closure_cache[state]
        seen = {state}
        stack = [state]
        while stack:
            current = stack.pop()
            for dst, word in outgoing.get(current, ()):
                if word is None and dst not in seen:
                    seen.add(dst)
                    stack.append(dst)
        closure_cache[state] = seen
        return seen

    # Breadth-first over states reached by words; renumber as we go.
    number = {start: 0}
    queue = [start]
    arcs: set[tuple[int, int, str | None]] = set()
    accepting: set[int] = set()
    while queue:
        state = queue.pop()
        reach = closure(state)
        if final in reach:
            accepting.add(number[state])
        for member in reach:
            for dst, word in outgoing.get(member, ()):
                if word is None:
                    continue
                if dst not in number:
                    number[dst] = len(number)
                    queue.append(dst)
                arcs.add((number[state], number[dst], word))
    # Minimise (Brzozowski): determinise the reverse, then determinise its reverse.
    reverse_dfa = _determinize(accepting, [(d, s, w) for s, d, w in arcs], {0})
    states, dfa_arcs, dfa_accepting = _determinize(
        reverse_dfa[2], [(d, s, w) for s, d, w in reverse_dfa[1]], {0}
    )
    final_state = states
    final_arcs: list[tuple[int, int, str | None]] = [
        (s, final_state, None) for s in sorted(dfa_accepting)
    ]
    return Grammar(
        states + 1,
        0,
        final_state,
        sorted(dfa_arcs, key=_arc_key) + final_arcs,
        words,
        oov,
        len(graph.arcs),
    )


def _determinize(
    starts: set[int],
    arcs: list[tuple[int, int, str | None]] | set[tuple[int, int, str | None]],
    accepting: set[int],
) -> tuple[int, list[tuple[int, int, str | None]], set[int]]:
    """Subset construction on an epsilon-free graph: (states, arcs, accepting)."""
    outgoing: dict[int, dict[str | None, set[int]]] = {}
    for src, dst, word in arcs:
        outgoing.setdefault(src, {}).setdefault(word, set()).add(dst)
    first = frozenset(starts)
    number = {first: 0}
    queue = [first]
    out_arcs: list[tuple[int, int, str | None]] = []
    out_accepting: set[int] = set()
    while queue:
        subset = queue.pop()
        if subset & accepting:
            out_accepting.add(number[subset])
        moves: dict[str | None, set[int]] = {}
        for state in subset:
            for word, targets in outgoing.get(state, {}).items():
                moves.setdefault(word, set()).update(targets)
        for word, targets in moves.items():
            target = frozenset(targets)
            if target not in number:
                number[target] = len(number)
                queue.append(target)
            out_arcs.append((number[subset], number[target], word))
    return len(number), out_arcs, out_accepting


@dataclass(frozen=True)
class WordNetwork:
    """The word sequences of a slot list as a minimal acyclic automaton (a DAFSA):
    sequences share their beginnings and their ends, so its size grows with the words
    of the list, not with how many templates refer to it."""

    start: int
    arcs: tuple[tuple[int, int, str], ...]
    #: States where a sequence may end (they can go on as well: "lamp", "lamp two").
    ends: frozenset[int]
    #: Word sequences it holds.
    size: int


def word_network(options: list[list[str]]) -> WordNetwork:
    """The minimal acyclic automaton of ``options`` (non-empty word sequences)."""
    trie: list[dict[str, int]] = [{}]
    ending: set[int] = set()
    for option in options:
        state = 0
        for word in option:
            if word not in trie[state]:
                trie.append({})
                trie[state][word] = len(trie) - 1
            state = trie[state][word]
        ending.add(state)
    # Merge states with the same future, deepest first (children have higher numbers).
    same: dict[tuple[bool, tuple[tuple[str, int], ...]], int] = {}
    canon = [0] * len(trie)
    for state in range(len(trie) - 1, -1, -1):
        key = (state in ending, tuple(sorted((w, canon[d]) for w, d in trie[state].items())))
        canon[state] = same.setdefault(key, state)
    arcs = {
        (canon[state], canon[dst], word)
        for state in set(canon)
        for word, dst in trie[state].items()
    }
    ends = frozenset(canon[s] for s in ending)
    return WordNetwork(canon[0], tuple(sorted(arcs)), ends, len({tuple(o) for o in options}))


def placeholder(list_name: str) -> str:
    """The arc label that stands for a whole slot list until ``splice``."""
    return "{" + list_name + "}"


def splice(grammar: Grammar, networks: dict[str, WordNetwork]) -> Grammar:
    """Each placeholder arc of ``grammar`` replaced by its list's word network.

    The network is copied once per list and target state, shared by all the arcs into
    that target: a list's words then cost (list words) x (targets), where the targets are
    the few distinct places a template goes on from after the list. Arcs from several
    states into one copy enter it through an empty transition to the copy's own start,
    so a long list's first words are not repeated at each of them either (one empty
    transition each, never two in a row: pocketsphinx's closure of empty transitions
    adds nothing). The result may be non-deterministic (pocketsphinx and ``accepts``
    take that).
    """
    sizes = {name: network.size for name, network in networks.items()}
    users: dict[tuple[str, int], list[int]] = {}
    arcs: set[tuple[int, int, str | None]] = set()
    for src, dst, word in grammar.arcs:
        if word is not None and word.startswith("{"):
            users.setdefault((word, dst), []).append(src)
        else:
            arcs.add((src, dst, word))
    if not users:
        return dataclasses.replace(grammar, list_sizes=sizes)
    states = grammar.states
    for (word, dst), sources in users.items():
        network = networks[word[1:-1]]
        copy: dict[int, int] = {}
        for state in sorted({s for s, _, _ in network.arcs}):
            if state != network.start or len(sources) > 1:
                copy[state] = states
                states += 1
        if network.start in copy:
            arcs.update((src, copy[network.start], None) for src in sources)
        for a, b, w in network.arcs:
            for origin in [copy[a]] if a in copy else sources:
                arcs.update((origin, t, w) for t in _targets(network, b, copy, dst))
    return Grammar(
        states,
        grammar.start,
        grammar.final,
        sorted(arcs, key=_arc_key),
        grammar.words,
        grammar.oov,
        grammar.graph_arcs,
        sizes,
    )


def _targets(network: WordNetwork, state: int, inner: dict[int, int], dst: int) -> list[int]:
    """Where an arc into ``state`` of the network goes in a copy that ends at ``dst``."""
    out = [dst] if state in network.ends else []
    if state in inner:
        out.append(inner[state])
    return out


def _arc_key(arc: tuple[int, int, str | None]) -> tuple[int, int, str]:
    return arc[0], arc[1], arc[2] or ""


def cached_grammar(grammar: Grammar, cache_dir: Path) -> Path:
    """Write the FSG to the cache (named by its digest) unless it is there already."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / f"commands-{grammar.digest}.fsg"
    if path.is_file():
        touch(path)  # just used: pruning keeps it (see built.py)
    else:
        replace_atomically(path, grammar.fsg)
    return path
