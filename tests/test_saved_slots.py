"""Home Assistant's names kept for the next start (satellite/understanding/saved_slots.py):
a restart begins with them, and HA's retained lists then need no second build."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest

from satellite.config import Config
from satellite.stt.sphinx import PocketSphinxRecognizer
from satellite.understanding import Understanding, build_understanding
from satellite.understanding.saved_slots import SavedSlots, starting_config
from satellite.understanding.slot_grammar import SlotGrammar
from tests.understand import settle

NAMES = ("desk lamp", "Kitchen Light")
AREAS = ("office",)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    base = Config()
    return dataclasses.replace(
        base,
        stt=dataclasses.replace(base.stt, cache_dir=str(tmp_path / "grammars")),
        mqtt=dataclasses.replace(base.mqtt, outbox_path=str(tmp_path / "state" / "outbox")),
    )


def _hears(understanding: Understanding, text: str) -> bool:
    recognizer = understanding.recognizer
    assert isinstance(recognizer, PocketSphinxRecognizer)
    return recognizer.grammar.accepts(text.split())


def test_a_restart_begins_with_the_names_home_assistant_sent_last(config: Config) -> None:
    saved = SavedSlots.for_config(config)
    assert starting_config(config, saved) == (config, None)  # first start: configured lists
    first = build_understanding(config, use_llm=False)
    assert not _hears(first, "turn on the desk lamp")
    grammar = SlotGrammar(config, first, saved)
    grammar.update(NAMES, AREAS)
    settle(grammar)
    assert grammar.swaps == 1
    assert json.loads(saved.path.read_text()) == {"names": list(NAMES), "areas": list(AREAS)}
    grammar.close()

    # the next start: HA's names are heard before HA (or the broker) says anything ...
    starting, lists = starting_config(config, saved)
    assert lists is not None and lists == grammar.lists
    again = build_understanding(starting, use_llm=False)
    assert _hears(again, "turn on the desk lamp")
    assert _hears(again, "turn off the lights in the office")
    result = again.templates.recognize("turn off the kitchen light")
    assert (result.intent, result.slots) == ("HassTurnOff", {"name": "Kitchen Light"})
    # ... and HA's retained lists, the same, build nothing beside the grammar in use
    restarted = SlotGrammar(config, again, saved, lists)
    restarted.update(NAMES, AREAS)
    assert not restarted.pending and restarted.swaps == 0
    # new lists from HA are built, swapped in and kept in their turn
    restarted.update(("desk lamp", "porch light"), ())
    settle(restarted)
    assert restarted.swaps == 1 and _hears(again, "turn on the porch light")
    assert json.loads(saved.path.read_text())["names"] == ["desk lamp", "porch light"]
    restarted.close()


@pytest.mark.parametrize(
    "content",
    [
        "{",
        '{"names": ["desk lamp"]}',
        '{"names": "desk lamp", "areas": []}',
        '{"names": [""], "areas": []}',
        '{"names": [3], "areas": []}',
        json.dumps({"names": ["x" * 201], "areas": []}),
    ],
    ids=["not-json", "no-areas", "not-a-list", "empty-name", "not-text", "too-long"],
)
def test_damaged_saved_names_mean_starting_from_the_configuration(
    config: Config, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    saved = SavedSlots.for_config(config)
    saved.path.parent.mkdir(parents=True)
    saved.path.write_text(content)
    with caplog.at_level(logging.WARNING):
        assert starting_config(config, saved) == (config, None)
    assert "starting from the configured ones" in caplog.text


def test_names_that_cannot_be_kept_are_only_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    saved = SavedSlots(blocked / "ha-slots-x.json")  # its folder is a file
    with caplog.at_level(logging.WARNING):
        saved.save(NAMES, AREAS)
    assert "Cannot keep Home Assistant's names" in caplog.text
    assert saved.load() is None
