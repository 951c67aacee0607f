"""The data sets understanding is checked on (tests/data) and a replay through the pipeline.

Shared by the understanding tests, the LLM tests and bench/understanding.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from satellite.config import Config
from satellite.events import Event
from satellite.nlu.events import IntentRecognized
from satellite.pipeline import Pipeline, build_stages
from satellite.understanding import Understanding, build_understanding
from tests import synth

DATA = Path(__file__).resolve().parent / "data"


def lines(name: str) -> list[str]:
    """The non-empty, non-comment lines of a text file in tests/data."""
    text = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in text if ln.strip() and not ln.startswith("#")]


def commands() -> list[tuple[str, str, dict[str, Any]]]:
    """tests/data/commands.tsv: (text, expected intent, expected slots)."""
    rows = []
    for line in lines("commands.tsv"):
        text, intent, slots = line.split("\t")
        rows.append((text, intent, json.loads(slots)))
    return rows


def replay(
    audio: synth.Float, config: Config, continuous: bool = True
) -> tuple[list[Event], Understanding]:
    """The audio through a pipeline with understanding (no LLM, no dialogue)."""
    stages = build_stages(config, continuous=continuous)
    understanding = build_understanding(config, use_llm=False, with_dialogue=False)
    stages.understanding = understanding
    return Pipeline(stages).process(synth.to_chunk(audio)), understanding


def intents(events: list[Event]) -> list[IntentRecognized]:
    return [e for e in events if isinstance(e, IntentRecognized)]
