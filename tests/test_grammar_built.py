"""Grammars kept on disk by their inputs (satellite/stt/built.py): read back, not built."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from satellite.nlu.intents import CARE_INTENTS, Entity, load_intent_set
from satellite.stt.built import inputs_digest, load_built, prune, save_built
from satellite.stt.fsg import Grammar, cached_grammar
from satellite.stt.grammar import build_grammar
from satellite.stt.lexicon import default_dictionary, dictionary_words, number_words

ENTITIES = (Entity("kitchen light", "light", "kitchen"), Entity("zqxjv lamp", "light", None))


def _fields(grammar: Grammar) -> dict[str, object]:
    return {f.name: getattr(grammar, f.name) for f in dataclasses.fields(grammar) if f.init}


def test_a_grammar_read_back_is_the_grammar_built(tmp_path: Path) -> None:
    intent_set = load_intent_set("en", ("HassTurnOn", *CARE_INTENTS), ENTITIES, ("garden",))
    dictionary = default_dictionary("en")
    words = dictionary_words(dictionary)
    built = build_grammar(intent_set, words.__contains__, number_words)
    inputs = inputs_digest(intent_set, dictionary)
    assert load_built(tmp_path, inputs) is None
    save_built(tmp_path, inputs, built, cached_grammar(built, tmp_path))
    again = load_built(tmp_path, inputs)
    assert again is not None
    assert {k: v for k, v in _fields(again).items() if k != "_next"} == {
        k: v for k, v in _fields(built).items() if k != "_next"
    }
    assert "zqxjv" in again.oov
    sentence = ["turn", "on", "the", "kitchen", "light"]
    assert again.accepts(sentence) and built.accepts(sentence)


def test_other_inputs_another_grammar(tmp_path: Path) -> None:
    dictionary = default_dictionary("en")
    one = load_intent_set("en", ("HassTurnOn",), ENTITIES, ("garden",))
    same = load_intent_set("en", ("HassTurnOn",), ENTITIES, ("garden",))
    other = load_intent_set("en", ("HassTurnOn",), ENTITIES, ("garden", "hall"))
    assert inputs_digest(one, dictionary) == inputs_digest(same, dictionary)
    assert inputs_digest(one, dictionary) != inputs_digest(other, dictionary)


def test_a_damaged_cache_is_built_again(tmp_path: Path) -> None:
    intent_set = load_intent_set("en", ("HassTurnOn",), ENTITIES, ())
    built = build_grammar(
        intent_set, dictionary_words(default_dictionary("en")).__contains__, number_words
    )
    path = cached_grammar(built, tmp_path)
    save_built(tmp_path, "x", built, path)
    path.write_text(path.read_text().replace("kitchen", "garden"))
    assert load_built(tmp_path, "x") is None
    (tmp_path / "built-x.json").write_text("{")
    assert load_built(tmp_path, "x") is None


def _built_for(names: tuple[str, ...], cache: Path) -> tuple[str, Grammar]:
    """Build and cache the grammar of lights called ``names``: its inputs' id and it."""
    entities = tuple(Entity(name, "light", None) for name in names)
    intent_set = load_intent_set("en", ("HassTurnOn",), entities, ())
    dictionary = default_dictionary("en")
    built = build_grammar(intent_set, dictionary_words(dictionary).__contains__, number_words)
    inputs = inputs_digest(intent_set, dictionary)
    path = cached_grammar(built, cache)
    path.with_suffix(".dict").write_text("light L AY T\n")  # as the recognizer writes it
    save_built(cache, inputs, built, path)
    return inputs, built


def test_only_the_most_recently_used_grammars_stay(tmp_path: Path) -> None:
    """Each change of names makes a new grammar: the cache keeps the last ones used,
    with their pronunciations and notes, and a grammar read back counts as used."""
    made = [_built_for((f"{word} lamp",), tmp_path) for word in ("desk", "floor", "wall")]
    for age, path in enumerate(sorted(tmp_path.iterdir())):  # all older than now
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    oldest_inputs, oldest = made[0]
    assert load_built(tmp_path, oldest_inputs) is not None  # used again: now the newest
    deleted = prune(tmp_path, keep=2)
    assert len(deleted) == 3  # one grammar: its FSG, pronunciations and note
    left = {p.name for p in tmp_path.iterdir()}
    assert f"commands-{oldest.digest}.fsg" in left
    assert len([n for n in left if n.endswith(".fsg")]) == 2
    assert len([n for n in left if n.endswith(".dict")]) == 2
    assert len([n for n in left if n.startswith("built-")]) == 2
    assert load_built(tmp_path, oldest_inputs) is not None
    gone = [inputs for inputs, _ in made if load_built(tmp_path, inputs) is None]
    assert len(gone) == 1  # pruned: it is built again when needed
    assert prune(tmp_path, keep=2) == []
