"""Home Assistant's slot lists rebuild the speech grammar and the templates.

Real parts throughout: hassil templates, the grammar compiler, pocketsphinx decoders,
speech made by eSpeak NG and the satellite's frame loop. The only stand-in is a
recognizer factory that raises, for the failing rebuild.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import time
from collections.abc import Iterator

import numpy as np
import pytest

from satellite.app import SatelliteApp
from satellite.audio.chunk import AudioChunk
from satellite.audio.io import NullSink
from satellite.config import Config
from satellite.errors import SatelliteError
from satellite.events import Event, SpeechStarted, UtteranceEnded
from satellite.mqtt.payloads import Command, Slots
from satellite.nlu.events import IntentRecognized, Transcript
from satellite.nlu.intents import (
    DEFAULT_DOMAIN,
    Entity,
    IntentSet,
    guess_domain,
    load_intent_set,
    merge_slots,
)
from satellite.pipeline import build_pipeline
from satellite.stt.factory import compile_grammar, configured_intent_set
from satellite.stt.sphinx import PocketSphinxRecognizer
from satellite.tts.espeak import EspeakEngine
from satellite.understanding import Understanding, build_understanding, slot_grammar
from satellite.understanding.slot_grammar import SlotGrammar
from tests import synth
from tests.home_names import AREAS, home_names
from tests.understand import settle

CONFIGURED = (
    Entity("kitchen light", "light", "kitchen"),
    Entity("front door", "lock", "hall"),
    Entity("television", "media_player", "living room"),
)


# --- merging HA's lists with the configured entities -------------------------------------


@pytest.mark.parametrize(
    ("name", "domain"),
    [
        ("Desk Lamp", "light"),
        ("porch lights", "light"),
        ("Ceiling Fan", "fan"),
        ("back door", "lock"),
        ("Garage Lock", "lock"),
        ("bedroom TV", "media_player"),
        ("kitchen speaker", "media_player"),
        ("television", "media_player"),
        ("bathroom heater", "climate"),
        ("Hall Thermostat", "climate"),
        ("fan heater", "climate"),  # the last word (the head noun) decides
        ("ceiling fan light", "light"),
        ("coffee maker", DEFAULT_DOMAIN),
        ("doorbell", DEFAULT_DOMAIN),  # whole words only
    ],
)
def test_domain_guessed_from_the_words_of_a_name(name: str, domain: str) -> None:
    assert guess_domain(name) == domain
    assert DEFAULT_DOMAIN == "switch"


def test_ha_lists_replace_the_configured_ones_and_known_names_keep_their_domain() -> None:
    entities, areas = merge_slots(
        CONFIGURED,
        ("Kitchen Light", "desk lamp", "Front  Door", "Kettle"),
        ("Kitchen", "Office"),
    )
    assert entities == (
        # configured: its domain and area kept, the area spelt as HA spells it
        Entity("Kitchen Light", "light", "Kitchen"),
        Entity("desk lamp", "light", None),
        # configured, its area (hall) unknown to HA: kept as configured
        Entity("Front Door", "lock", "hall"),
        Entity("Kettle", "switch", None),
    )
    assert areas == ("Kitchen", "Office")  # not the configured entities' other areas


def test_merge_drops_repeats_and_blanks() -> None:
    entities, areas = merge_slots(
        CONFIGURED, ("desk lamp", "Desk Lamp", "  ", "tv"), ("office", "Office ", "")
    )
    assert entities == (Entity("desk lamp", "light"), Entity("tv", "media_player"))
    assert areas == ("office",)
    assert merge_slots(CONFIGURED, (), ()) == ((), ())


# --- rebuilding the grammar ----------------------------------------------------------------


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    base = Config()
    cache = tmp_path_factory.mktemp("grammars")
    return dataclasses.replace(base, stt=dataclasses.replace(base.stt, cache_dir=str(cache)))


def _understanding(config: Config) -> Understanding:
    return build_understanding(config, use_llm=False)


def _intent_set(config: Config) -> IntentSet:
    return configured_intent_set(config.nlu, config.satellite.language, config.satellite.area)


def _accepts(understanding: Understanding, text: str) -> bool:
    recognizer = understanding.recognizer
    assert isinstance(recognizer, PocketSphinxRecognizer)
    return recognizer.grammar.accepts(text.split())


def test_slots_rebuild_the_grammar_and_the_templates(config: Config) -> None:
    understanding = _understanding(config)
    old = understanding.recognizer
    assert not _accepts(understanding, "turn on the desk lamp")
    grammar = SlotGrammar(config, understanding)
    grammar.update(("desk lamp", "Kitchen Light"), ("office",))
    assert grammar.pending  # building in the worker
    settle(grammar)
    assert grammar.swaps == 1 and grammar.failures == 0
    assert understanding.recognizer is not old
    assert _accepts(understanding, "turn on the desk lamp")
    assert _accepts(understanding, "turn off the lights in the office")
    assert _accepts(understanding, "turn on the kitchen light")
    assert not _accepts(understanding, "turn on the reading lamp")  # HA does not expose it
    result = understanding.templates.recognize("turn on the desk lamp")
    assert (result.intent, result.slots) == ("HassTurnOn", {"name": "desk lamp"})
    result = understanding.templates.recognize("turn off the kitchen light")
    assert (result.intent, result.slots) == ("HassTurnOff", {"name": "Kitchen Light"})
    intent_set = understanding.templates.intent_set
    assert Entity("Kitchen Light", "light", "kitchen") in intent_set.entities
    assert set(intent_set.areas) == {"office", "kitchen"}
    # the same lists again: nothing to build
    grammar.update(("desk lamp", "Kitchen Light"), ("office",))
    assert not grammar.pending


def test_a_grammar_is_compiled_once_for_the_same_intents_and_names(config: Config) -> None:
    first, path = compile_grammar(config.stt, _intent_set(config))
    again, path_again = compile_grammar(config.stt, _intent_set(config))
    assert again is first and path_again == path
    with_lamp = load_intent_set(
        config.satellite.language,
        config.nlu.intents,
        (*config.nlu.entities, Entity("desk lamp", "light", "office")),
        (*config.nlu.areas, "office"),
        config.satellite.area,
    )
    other, other_path = compile_grammar(config.stt, with_lamp)
    assert other is not first and other_path != path
    assert "desk" in other.words and "desk" not in first.words


def test_the_configured_lists_need_no_rebuild(config: Config) -> None:
    understanding = _understanding(config)
    grammar = SlotGrammar(config, understanding)
    names = tuple(e.name for e in config.nlu.entities)
    grammar.update(names, config.nlu.areas)
    assert not grammar.pending and grammar.swaps == 0


def test_unpronounceable_names_are_left_out_with_a_warning(
    config: Config, caplog: pytest.LogCaptureFixture
) -> None:
    understanding = _understanding(config)
    grammar = SlotGrammar(config, understanding)
    configured = grammar.status()
    assert (configured.names, configured.areas) == (8, 7)  # the configured entities, areas
    with caplog.at_level(logging.WARNING, logger="satellite.stt.grammar"):
        grammar.update(("desk lamp", "Zyxqv Lamp"), ("office", "Qwzxv"))
        settle(grammar)
    assert grammar.swaps == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # once for the build, naming every word left out
    assert "no pronunciation for" in warnings[0]
    assert "zyxqv" in warnings[0] and "qwzxv" in warnings[0]
    # info tells HA what the grammar holds: the names and areas it can say
    status = grammar.status()
    assert (status.names, status.areas) == (1, 1)
    assert configured.built <= status.built <= time.time()
    assert _accepts(understanding, "turn on the desk lamp")
    assert _accepts(understanding, "turn off the lights in the office")
    assert not _accepts(understanding, "turn on the zyxqv lamp")


def test_newer_lists_win_over_a_build_in_progress(config: Config) -> None:
    understanding = _understanding(config)
    grammar = SlotGrammar(config, understanding)
    grammar.update(("desk lamp",), ("office",))
    grammar.update(("porch light",), ("garden",))
    settle(grammar)
    assert grammar.lists == ((Entity("porch light", "light"),), ("garden",))
    assert _accepts(understanding, "turn on the porch light")
    assert not _accepts(understanding, "turn on the desk lamp")
    assert understanding.templates.recognize("turn on the porch light").slots == {
        "name": "porch light"
    }


def test_an_engine_without_a_grammar_gets_new_templates_only(config: Config) -> None:
    understanding = _understanding(config)
    recognizer = understanding.recognizer
    vosk = dataclasses.replace(config, stt=dataclasses.replace(config.stt, engine="vosk"))
    grammar = SlotGrammar(vosk, understanding)
    grammar.update(("desk lamp",), ("office",))
    settle(grammar)
    assert grammar.swaps == 1
    assert understanding.recognizer is recognizer  # no model is loaded again
    result = understanding.templates.recognize("turn on the desk lamp")
    assert (result.intent, result.slots) == ("HassTurnOn", {"name": "desk lamp"})


def test_a_failing_rebuild_keeps_the_old_grammar(
    config: Config, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    understanding = _understanding(config)
    old_recognizer, old_templates = understanding.recognizer, understanding.templates
    grammar = SlotGrammar(config, understanding)

    def broken(*_args: object) -> None:
        raise SatelliteError("The speech grammar is empty. Fix: check nlu.intents")

    monkeypatch.setattr(slot_grammar, "make_recognizer", broken)
    with caplog.at_level(logging.ERROR, logger="satellite.understanding.slot_grammar"):
        grammar.update(("desk lamp",), ("office",))
        settle(grammar)
    assert grammar.failures == 1 and grammar.swaps == 0
    assert understanding.recognizer is old_recognizer
    assert understanding.templates is old_templates
    assert _accepts(understanding, "turn on the kitchen light")
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "previous grammar stays in use" in errors[0].getMessage()
    assert errors[0].exc_info is not None and "grammar is empty" in str(errors[0].exc_info[1])
    grammar.poll()  # the same lists are not built again on every frame ...
    assert not grammar.pending
    monkeypatch.undo()
    grammar.update(("desk lamp",), ("office",))  # ... but when HA sends them again
    settle(grammar)
    assert grammar.swaps == 1 and _accepts(understanding, "turn on the desk lamp")


# --- in the running satellite -------------------------------------------------------------


class Events:
    """Stands in for the MQTT link."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish_event(self, event: Event) -> None:
        self.events.append(event)

    def publish(self, path: str, payload: bytes, qos: int) -> None:
        """Nothing is published in these tests."""

    def in_utterance(self) -> bool:
        started = sum(isinstance(e, SpeechStarted) for e in self.events)
        return started > sum(isinstance(e, UtteranceEnded) for e in self.events)

    def intents(self) -> list[IntentRecognized]:
        return [e for e in self.events if isinstance(e, IntentRecognized)]


def _chunks(audio: synth.Float, chunk_seconds: float = 0.1) -> Iterator[AudioChunk]:
    samples = synth.to_chunk(audio).to_int16()
    step = round(chunk_seconds * synth.RATE)
    for start in range(0, len(samples), step):
        yield AudioChunk.from_int16(
            samples[start : start + step], timestamp_seconds=start / synth.RATE
        )


@pytest.mark.usefixtures("need_espeak")
def test_the_satellite_swaps_between_utterances_and_hears_the_new_name(config: Config) -> None:
    understanding = _understanding(config)
    pipeline = build_pipeline(config, continuous=True, understanding=understanding)
    old = understanding.recognizer
    events = Events()
    inbox: queue.Queue[Command] = queue.Queue()
    app = SatelliteApp(
        pipeline,
        events,
        inbox,
        EspeakEngine(),
        NullSink(),
        events.publish,
        SlotGrammar(config, understanding),
    )
    grammar = app.grammar
    assert grammar is not None
    command = synth.espeak("turn on the desk lamp", "en-us", 150)
    audio = np.concatenate(
        [synth.silence(0.8), command, synth.silence(1.5), command, synth.silence(1.5)]
    )
    audio = audio + synth.white_noise(len(audio) / synth.RATE, 15.0, seed=1)
    #: Polls that found the new grammar built while an utterance was heard: swapped?
    mid_utterance_swaps: list[bool] = []
    #: Whether an utterance was being heard at each poll that swapped.
    swapped_in_utterance: list[bool] = []

    def source() -> Iterator[AudioChunk]:
        sent = built = False
        for chunk in _chunks(audio):
            in_utterance = events.in_utterance()
            if in_utterance and not sent:
                inbox.put(Slots(("desk lamp", "kitchen light"), ("office",)))
                sent = True  # the next poll hands it to the worker
            elif in_utterance and grammar.pending:
                grammar.wait(timeout=600)  # bounds a hung build; no timing is asserted
                built = True
            swaps = grammar.swaps
            yield chunk  # run() polls (and may swap), then processes this chunk
            if built and in_utterance:
                mid_utterance_swaps.append(grammar.swaps != swaps)
            if grammar.swaps != swaps:
                swapped_in_utterance.append(in_utterance)

    try:
        app.run(source())
    finally:
        app.close()
    assert mid_utterance_swaps and not any(mid_utterance_swaps)
    assert swapped_in_utterance == [False]
    assert understanding.recognizer is not old
    # What the decoder heard shows which grammar it searched. (Whether the intent then
    # passes the out-of-domain rejection is the accuracy tests' business, not this one's.)
    heard = [e.text for e in events.events if isinstance(e, Transcript)]
    assert len(heard) == 2 and len(events.intents()) == 2
    # the first time heard by the old grammar, which has no desk lamp; then by the new one
    assert "desk" not in heard[0].split()
    assert heard[1] == "turn on the desk lamp"
    result = understanding.templates.recognize(heard[1])
    assert (result.intent, result.slots) == ("HassTurnOn", {"name": "desk lamp"})


def test_without_a_grammar_the_app_only_keeps_the_slots() -> None:
    events = Events()
    inbox: queue.Queue[Command] = queue.Queue()
    pipeline = build_pipeline(Config(), continuous=True)
    app = SatelliteApp(pipeline, events, inbox, EspeakEngine(), NullSink(), events.publish)
    inbox.put(Slots(("desk lamp",), ("office",)))
    app.poll()
    app.close()
    assert app.slots == Slots(("desk lamp",), ("office",))


def test_a_large_home_gives_its_build_memory_back(config: Config) -> None:
    """300 names in 20 areas: once the new grammar serves, the process holds about what
    the larger decoders need, not what building them took (glibc keeps freed pages
    of the worker's arena until they are given back)."""
    understanding = _understanding(config)
    grammar = SlotGrammar(config, understanding)
    slot_grammar.give_back_memory()
    before = _rss_mb()
    grammar.update(home_names(300), AREAS)
    settle(grammar)
    grammar.wait(timeout=600)
    assert grammar.swaps == 1 and grammar.status().names == 300
    assert _rss_mb() - before < 60
    grammar.close()


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        line = next(ln for ln in status if ln.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024
