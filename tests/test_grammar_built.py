"""Grammars kept on disk by their inputs (satellite/stt/built.py): read back, not built."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from satellite.nlu.intents import CARE_INTENTS, Entity, load_intent_set
from satellite.stt.built import inputs_digest, load_built, save_built
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
