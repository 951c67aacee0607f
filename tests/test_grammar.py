"""The speech grammar compiled from HA's templates and our care intents."""

from __future__ import annotations

import copy
import itertools
import os
from pathlib import Path

import pytest
from hassil.sample import sample_intents
from pocketsphinx import Config, Decoder

from satellite.cmudict import Pronunciations
from satellite.errors import SatelliteError
from satellite.nlu.intents import CARE_INTENTS, Entity, IntentSet, load_intent_set
from satellite.nlu.recognizer import TemplateRecognizer
from satellite.stt.fsg import cached_grammar
from satellite.stt.grammar import about_domains, build_grammar
from satellite.stt.lexicon import (
    default_dictionary,
    dictionary_words,
    grammar_dictionary,
    number_words,
)

HA_INTENTS = (
    "HassTurnOn",
    "HassTurnOff",
    "HassLightSet",
    "HassGetState",
    "HassNevermind",
    "HassStartTimer",
)
ENTITIES = (
    Entity("kitchen light", "light", "kitchen"),
    Entity("bedroom lamp", "light", "bedroom"),
    Entity("front door", "lock", "hall"),
    Entity("ceiling fan", "fan", "living room"),
)


@pytest.fixture(scope="module")
def intent_set() -> IntentSet:
    return load_intent_set("en", HA_INTENTS + CARE_INTENTS, ENTITIES, ("garden",))


@pytest.fixture(scope="module")
def words() -> Pronunciations:
    return dictionary_words(default_dictionary("en"))


def _build(intent_set: IntentSet, words: Pronunciations):  # type: ignore[no-untyped-def]
    return build_grammar(intent_set, words.__contains__, number_words)


def test_templates_are_parsed_before_the_first_command() -> None:
    """hassil parses sentence templates on first use; a grammar reused from the process
    no longer walks them, so the first command paid ~0.1 s for it in the frame that
    decided it. The recognizer parses them when it is built."""
    fresh = load_intent_set("en", HA_INTENTS + CARE_INTENTS, ENTITIES, ("garden",))
    data = [d for i in fresh.intents.intents.values() for d in i.data]
    assert data and not any("sentences" in vars(d) for d in data)
    TemplateRecognizer(fresh)
    assert all("sentences" in vars(d) for d in data)


def test_number_words() -> None:
    assert number_words(55) == ["fifty", "five"]
    assert number_words(100) == ["one", "hundred"]


def test_every_sampled_template_sentence_is_in_the_grammar(
    intent_set: IntentSet, words: Pronunciations
) -> None:
    grammar = _build(intent_set, words)
    recognizer = TemplateRecognizer(intent_set)
    checked = 0
    # templates about kinds of device nobody has here are left out (see the next test)
    kept = copy.deepcopy(intent_set.intents)
    domains = {e.domain for e in intent_set.entities}
    for intent in kept.intents.values():
        intent.data = [d for d in intent.data if about_domains(d, domains)]
    for intent_name, text in itertools.islice(
        sample_intents(kept, slot_lists=intent_set.slot_lists, max_sentences_per_intent=40),
        3000,
    ):
        raw = text.lower().replace("%", " percent").replace("-", " ").split()
        tokens: list[str] = []
        for token in (t.strip(".,?!") for t in raw):
            tokens.extend(number_words(int(token)) if token.isdigit() else [token])
        if any(t not in words for t in tokens):
            continue  # words missing from the dictionary are left out of the grammar
        assert grammar.accepts(tokens), (intent_name, text)
        checked += 1
    assert checked > 200
    # ... and the texts the grammar produces are understood by the same templates
    for text, expected in [
        ("turn on the kitchen light", "HassTurnOn"),
        ("set a timer for five minutes", "HassStartTimer"),
        ("set the bedroom lamp to fifty percent", "HassLightSet"),
        ("i need help", "CallForHelp"),
        ("what time is it", "GetTime"),
    ]:
        assert grammar.accepts(text.split()), text
        assert recognizer.recognize(text).intent == expected


def test_templates_for_devices_nobody_has_are_left_out(words: Pronunciations) -> None:
    """No cover (garage door, blinds) here: its sentences would only be mistaken for."""
    garage = ["open", "the", "garage", "door"]
    without = _build(load_intent_set("en", HA_INTENTS, ENTITIES, ()), words)
    assert not without.accepts(garage)
    assert without.accepts(["turn", "on", "the", "kitchen", "light"])
    with_cover = (*ENTITIES, Entity("garage door", "cover", "garage"))
    assert _build(load_intent_set("en", HA_INTENTS, with_cover, ()), words).accepts(garage)
    assert (
        without.word_arcs
        < _build(load_intent_set("en", HA_INTENTS, with_cover, ()), words).word_arcs
    )


def test_the_satellites_own_area_makes_here_sentences_speakable(words: Pronunciations) -> None:
    """Once the satellite has an area, "turn off the lights" means the lights there."""
    here = ["turn", "off", "the", "lights"]
    nowhere = load_intent_set("en", HA_INTENTS, ENTITIES, ())
    assert not _build(nowhere, words).accepts(here)
    assert TemplateRecognizer(nowhere).recognize("turn off the lights").intent is None
    kitchen = load_intent_set("en", HA_INTENTS, ENTITIES, (), area="kitchen")
    assert _build(kitchen, words).accepts(here)
    result = TemplateRecognizer(kitchen).recognize("turn off the lights")
    assert (result.intent, result.slots.get("area")) == ("HassTurnOff", "kitchen")
    # a named area still wins over the satellite's own
    named = TemplateRecognizer(kitchen).recognize("turn off the lights in the bedroom")
    assert named.slots.get("area") == "bedroom"


def test_grammar_rejects_other_sentences(intent_set: IntentSet, words: Pronunciations) -> None:
    grammar = _build(intent_set, words)
    for text in [
        "the weather is lovely today",
        "turn on the",
        "kitchen light on turn",
        "i feel dizzy please get the nurse",
        "",
    ]:
        assert not grammar.accepts(text.split()), text


def test_grammar_is_small_and_loads_in_pocketsphinx(
    intent_set: IntentSet, words: Pronunciations, tmp_path: Path
) -> None:
    grammar = _build(intent_set, words)
    # minimised: a few thousand word arcs, not the 100k+ of the template expansion
    assert grammar.word_arcs < 20000
    assert grammar.states < 5000
    path = cached_grammar(grammar, tmp_path)
    assert path == cached_grammar(grammar, tmp_path)
    model = default_dictionary("en")
    config = Config(
        lm=None,
        fsg=os.fspath(path),
        dict=model,
        loglevel="FATAL",
        hmm=os.fspath(Path(model).parent / "en-us"),
    )
    Decoder(config)


def test_the_grammar_loads_with_a_dictionary_of_its_own_words(
    intent_set: IntentSet, words: Pronunciations, tmp_path: Path
) -> None:
    grammar = _build(intent_set, words)
    path = cached_grammar(grammar, tmp_path)
    spoken = {word for _, _, word in grammar.arcs if word}
    small = grammar_dictionary(spoken, default_dictionary("en"), path.with_suffix(".dict"))
    entries = [line.split(" ", 1)[0] for line in small.read_text().splitlines()]
    assert {e.split("(")[0] for e in entries} == spoken  # every word, nothing else
    assert "eight" in spoken and "lights" in spoken  # numbers and plurals too
    assert any(e.endswith("(2)") for e in entries)  # every pronunciation of each
    small.write_text(small.read_text() + "extra EH1 K S T R AH0\n")
    assert grammar_dictionary(spoken, default_dictionary("en"), small) == small
    assert "extra" in small.read_text()  # cached: not written again
    config = Config(
        lm=None,
        fsg=os.fspath(path),
        dict=os.fspath(small),
        loglevel="FATAL",
        hmm=os.fspath(Path(default_dictionary("en")).parent / "en-us"),
    )
    decoder = Decoder(config)
    assert decoder.lookup_word("kitchen") is not None


def test_grammar_follows_the_slot_lists(words: Pronunciations) -> None:
    small = load_intent_set("en", ("HassTurnOn",), (Entity("desk lamp", "light", "study"),), ())
    grammar = _build(small, words)
    assert grammar.accepts(["turn", "on", "the", "desk", "lamp"])
    assert not grammar.accepts(["turn", "on", "the", "kitchen", "light"])
    other = load_intent_set(
        "en", ("HassTurnOn",), (Entity("kitchen light", "light", "kitchen"),), ()
    )
    assert _build(other, words).digest != grammar.digest


def test_unknown_words_are_left_out_and_reported(words: Pronunciations) -> None:
    odd = load_intent_set(
        "en",
        ("HassTurnOn",),
        (Entity("zorbulator", "switch", None), Entity("radio", "switch", None)),
        (),
    )
    grammar = _build(odd, words)
    assert "zorbulator" in grammar.oov
    assert grammar.accepts(["turn", "on", "the", "radio"])
    assert not grammar.accepts(["turn", "on", "the", "zorbulator"])


def test_unknown_language_and_intent_names() -> None:
    with pytest.raises(SatelliteError, match="language"):
        load_intent_set("xx", ("HassTurnOn",), (), ())
    with pytest.raises(SatelliteError, match="Unknown intent"):
        load_intent_set("en", ("HassFlyToTheMoon",), (), ())
    with pytest.raises(SatelliteError, match="English"):
        default_dictionary("de")
