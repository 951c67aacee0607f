"""A grammar for a real home's names: slot lists spliced in as word networks, not
expanded inside every template, with the same sentences as the expansion."""

from __future__ import annotations

import pytest

from satellite.cmudict import Pronunciations
from satellite.nlu.intents import CARE_INTENTS, Entity, IntentSet, load_intent_set, merge_slots
from satellite.stt.fsg import Grammar, WordNetwork, placeholder, splice, word_network
from satellite.stt.grammar import build_grammar
from satellite.stt.lexicon import default_dictionary, dictionary_words, number_words
from tests.home_names import AREAS, home_names

HA_INTENTS = ("HassTurnOn", "HassTurnOff", "HassLightSet", "HassGetState", "HassStartTimer")
ENTITIES = (
    Entity("kitchen light", "light", "kitchen"),
    Entity("kitchen light two", "light", "kitchen"),
    Entity("bedroom lamp", "light", "bedroom"),
    Entity("front door", "lock", "hall"),
    Entity("ceiling fan", "fan", "living room"),
    Entity("heater", "climate", "bathroom"),
    Entity("zorbulator", "switch", None),
)


@pytest.fixture(scope="module")
def words() -> Pronunciations:
    return dictionary_words(default_dictionary("en"))


@pytest.fixture(scope="module")
def intent_set() -> IntentSet:
    return load_intent_set("en", HA_INTENTS + CARE_INTENTS, ENTITIES, ("garden",), "kitchen")


def _build(intent_set: IntentSet, words: Pronunciations, expand: bool = False) -> Grammar:
    return build_grammar(intent_set, words.__contains__, number_words, expand_lists=expand)


def _language_difference(a: Grammar, b: Grammar) -> list[str] | None:
    """A word sequence that one grammar accepts and the other does not, or None when
    they accept the same sentences (both determinised together, breadth first)."""

    def step(g: Grammar) -> dict[int, dict[str | None, set[int]]]:
        out: dict[int, dict[str | None, set[int]]] = {}
        for src, dst, word in g.arcs:
            out.setdefault(src, {}).setdefault(word, set()).add(dst)
        return out

    moves = (step(a), step(b))
    finals = (a.final, b.final)

    def closure(i: int, states: set[int]) -> frozenset[int]:
        out, stack = set(states), list(states)
        while stack:
            for dst in moves[i].get(stack.pop(), {}).get(None, ()):
                if dst not in out:
                    out.add(dst)
                    stack.append(dst)
        return frozenset(out)

    def after(i: int, states: frozenset[int], word: str) -> frozenset[int]:
        return closure(i, {d for s in states for d in moves[i].get(s, {}).get(word, ())})

    first = (closure(0, {a.start}), closure(1, {b.start}))
    seen = {first}
    queue: list[tuple[tuple[frozenset[int], frozenset[int]], list[str]]] = [(first, [])]
    while queue:
        (left, right), path = queue.pop(0)
        if (finals[0] in left) != (finals[1] in right):
            return path
        labels = {
            w for i, side in enumerate((left, right)) for s in side for w in moves[i].get(s, {})
        }
        for word in sorted(w for w in labels if w):
            pair = (after(0, left, word), after(1, right, word))
            if not pair[0] and not pair[1]:
                continue
            if not pair[0] or not pair[1]:
                return [*path, word]
            if pair not in seen:
                seen.add(pair)
                queue.append((pair, [*path, word]))
    return None


def test_a_word_network_shares_beginnings_and_ends() -> None:
    network = word_network([["kitchen", "light"], ["hall", "light"], ["hall", "lamp"]])
    # start -kitchen-> a -light-> end ; start -hall-> b -light|lamp-> end
    assert len(network.arcs) == 5
    assert len({s for s, _, _ in network.arcs} | {d for _, d, _ in network.arcs}) == 4
    same_ends = word_network([["kitchen", "light"], ["hall", "light"]])
    assert len(same_ends.arcs) == 3  # "light" once


def test_a_name_inside_another_name_stays_a_whole_name() -> None:
    """ "lamp" and "lamp two": the network ends after "lamp" and also goes on."""
    network = word_network([["lamp"], ["lamp", "two"]])
    template = Grammar(
        4, 0, 3, [(0, 1, "on"), (1, 2, placeholder("name")), (2, 3, None)], set(), set()
    )
    grammar = splice(template, {"name": network})
    assert grammar.accepts(["on", "lamp"])
    assert grammar.accepts(["on", "lamp", "two"])
    assert not grammar.accepts(["on", "two"])
    assert not grammar.accepts(["on"])
    assert not any(w and w.startswith("{") for _, _, w in grammar.arcs)


def test_one_list_in_two_places_keeps_each_place_apart() -> None:
    """Two templates refer to {name} and go on differently: no sentence of one may end
    the way the other does."""
    template = Grammar(
        6,
        0,
        5,
        [
            (0, 1, "on"),
            (1, 2, placeholder("name")),
            (0, 3, "dim"),
            (3, 4, placeholder("name")),
            (4, 2, "please"),
            (2, 5, None),
        ],
        set(),
        set(),
    )
    network: WordNetwork = word_network([["desk", "lamp"], ["fan"]])
    grammar = splice(template, {"name": network})
    assert grammar.accepts(["on", "desk", "lamp"])
    assert grammar.accepts(["dim", "fan", "please"])
    assert grammar.accepts(["on", "fan"])
    assert not grammar.accepts(["dim", "fan"])
    assert not grammar.accepts(["on", "fan", "please"])


def test_spliced_lists_give_the_sentences_of_the_expanded_templates(
    intent_set: IntentSet, words: Pronunciations
) -> None:
    spliced = _build(intent_set, words)
    expanded = _build(intent_set, words, expand=True)
    assert _language_difference(spliced, expanded) is None
    # minimal both: the decoder gets the same graph as when the lists were expanded
    assert (spliced.states, len(spliced.arcs)) == (expanded.states, len(expanded.arcs))
    assert spliced.graph_arcs < expanded.graph_arcs
    assert "zorbulator" in spliced.oov
    assert spliced.oov == expanded.oov
    for text in (
        "turn on the kitchen light",
        "turn on the kitchen light two",
        "turn off the bedroom lamp",
        "set the kitchen light to fifty percent",
        "turn off the lights in the garden",
        "turn off the lights",
        "is the front door locked",
        "set a timer for five minutes",
        "i need help",
    ):
        assert spliced.accepts(text.split()), text
    for text in (
        "turn on the zorbulator",  # no pronunciation: left out
        "turn on the kitchen",
        "turn on the kitchen light three",
        "turn on the light two",
        "on the kitchen light turn",
        "the weather is lovely today",
    ):
        assert not spliced.accepts(text.split()), text


def test_a_difference_in_one_sentence_is_found(
    intent_set: IntentSet, words: Pronunciations
) -> None:
    """The comparison above can fail: one name less is one sentence family less."""
    fewer = load_intent_set("en", HA_INTENTS + CARE_INTENTS, ENTITIES[1:], ("garden",), "kitchen")
    difference = _language_difference(_build(intent_set, words), _build(fewer, words))
    assert difference is not None


def test_names_cost_arcs_in_proportion_not_per_template(words: Pronunciations) -> None:
    """Twice the names: the template graph stays the same and the names' part of the
    grammar about doubles. Expanded inside each template, the graph grew with names x
    templates (300 names: 180k arcs to minimise)."""
    vocabulary = sorted(w for w in words if w.isalpha() and 5 <= len(w) <= 7)[::97]

    def grammar(count: int) -> Grammar:
        names = [
            f"{vocabulary[i % len(vocabulary)]} {vocabulary[(i * 7 + 3) % len(vocabulary)]}"
            for i in range(count)
        ]
        entities, areas = merge_slots((), names, AREAS)
        return _build(load_intent_set("en", HA_INTENTS, entities, areas), words)

    none, some, twice = grammar(1), grammar(300), grammar(600)
    assert none.graph_arcs == some.graph_arcs == twice.graph_arcs
    part, part_twice = some.word_arcs - none.word_arcs, twice.word_arcs - none.word_arcs
    assert 1.5 < part_twice / part < 2.2  # first words shared more often among 600
    # and the home's own mix of names builds and holds its names
    entities, areas = merge_slots((), home_names(400), AREAS)
    home = _build(load_intent_set("en", HA_INTENTS, entities, areas), words)
    for text in (
        "turn on the kitchen ceiling light",
        "turn off the kitchen ceiling light two",
        "turn on the coffee machine",
    ):
        assert home.accepts(text.split()), text
