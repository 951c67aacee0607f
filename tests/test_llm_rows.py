"""The label logits from their own output rows (llm_rows.py) and the memory they save.

The small tests write GGUF files of their own; those with the real model run llama.cpp
in a child process (never in the test process: see tests.understand.need_llm).
"""

from __future__ import annotations

import json
import mmap
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from satellite.nlu.intents import CARE_INTENTS
from satellite.nlu.llm import LlmFallback
from satellite.nlu.llm_rows import LabelRows, output_layer, release_pages
from satellite.nlu.settings import LlmSettings
from tests.understand import lines, need_llm

ROOT = Path(__file__).resolve().parent.parent
ACTIVE = ("HassTurnOn", "HassTurnOff", "HassNevermind", *CARE_INTENTS)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _write_gguf(
    path: Path, architecture: str, rows: np.ndarray, scales: np.ndarray, kind: int = 8
) -> int:
    """A GGUF holding a vocabulary and one Q8_0 ``token_embd.weight`` (rows x n_embd
    int8 quants, one float16 scale per 32); returns the tensor's file offset."""
    n_vocab, n_embd = rows.shape
    values = [
        _string("general.architecture") + struct.pack("<I", 8) + _string(architecture),
        _string("general.alignment") + struct.pack("<II", 4, 64),
        _string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, n_vocab)
        + b"".join(_string(f"tok{i}") for i in range(n_vocab)),
        _string("tokenizer.ggml.scores")
        + struct.pack("<IIQ", 9, 6, n_vocab)
        + np.zeros(n_vocab, "<f4").tobytes(),
    ]
    tensor = _string("token_embd.weight") + struct.pack("<IQQIQ", 2, n_embd, n_vocab, kind, 0)
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, len(values)) + b"".join(values) + tensor
    start = -(-len(header) // 64) * 64
    blocks = n_embd // 32
    data = bytearray()
    for row, row_scales in zip(rows, scales, strict=True):
        for block in range(blocks):
            data += np.float16(row_scales[block]).tobytes()
            data += row[block * 32 : (block + 1) * 32].astype(np.int8).tobytes()
    path.write_bytes(header + bytes(start - len(header)) + bytes(data))
    return start


def _model(tmp_path: Path, n_vocab: int = 300, n_embd: int = 64) -> tuple[Path, np.ndarray]:
    """A small model file and its rows as floats (scale x quant)."""
    generator = np.random.default_rng(7)
    quants = generator.integers(-127, 128, size=(n_vocab, n_embd))
    scales = generator.uniform(0.001, 0.02, size=(n_vocab, n_embd // 32)).astype(np.float16)
    path = tmp_path / "tiny.gguf"
    _write_gguf(path, "gemma3", quants, scales)
    weights = quants * np.repeat(scales.astype(np.float64), 32, axis=1)
    return path, weights


def test_label_rows_give_the_dot_products_of_the_hidden_state(tmp_path: Path) -> None:
    path, weights = _model(tmp_path)
    layer = output_layer(path)
    assert layer is not None and (layer.n_embd, layer.n_vocab) == (64, 300)
    tokens = [5, 299, 0, 17, 5]
    rows = LabelRows(layer, tokens)
    hidden = np.random.default_rng(1).normal(size=64).astype(np.float32) * 3
    logits = rows.logits(hidden)
    assert sorted(logits) == [0, 5, 17, 299]
    # ggml multiplies by the hidden state quantized to Q8_0: per block of 32 values,
    # a float16 scale max|x|/127 and the values rounded to multiples of it
    blocks = hidden.astype(np.float64).reshape(-1, 32)
    scale = np.abs(blocks).max(axis=1) / 127.0
    kept = scale.astype(np.float16).astype(np.float64)
    quantized = (np.round(blocks / scale[:, None]) * kept[:, None]).reshape(-1)
    for token, value in logits.items():
        assert value == pytest.approx(float(weights[token] @ quantized), abs=1e-4), token
        bound = 0.01 * np.linalg.norm(weights[token]) * np.linalg.norm(hidden)
        assert abs(value - float(weights[token] @ hidden)) < bound, token
    assert logits[5] != pytest.approx(logits[17])


def test_other_models_are_left_to_llama_cpp(tmp_path: Path) -> None:
    generator = np.random.default_rng(3)
    quants = generator.integers(-127, 128, size=(40, 64))
    scales = np.full((40, 2), 0.01)
    other = tmp_path / "other.gguf"
    _write_gguf(other, "gemma2", quants, scales)  # soft-caps its logits
    assert output_layer(other) is None
    f16 = tmp_path / "f16.gguf"
    _write_gguf(f16, "gemma3", quants, scales, kind=1)
    assert output_layer(f16) is None
    text = tmp_path / "notes.gguf"
    text.write_bytes(b"not a model at all")
    assert output_layer(text) is None
    layer = output_layer(_model(tmp_path)[0])
    assert layer is not None
    with pytest.raises(ValueError, match="outside the vocabulary"):
        LabelRows(layer, [300])


def _resident_kib(path: Path) -> int:
    """This process's resident KiB of its mappings of ``path``."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if "-" in line.split(" ", 1)[0] and len(line.split()) >= 5:
            inside = line.split()[-1] == str(path.resolve())
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def test_released_pages_leave_the_process_and_come_back_intact(tmp_path: Path) -> None:
    path, _ = _model(tmp_path, n_vocab=6000)
    layer = output_layer(path)
    assert layer is not None
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        before = bytes(data)  # touches every page
        resident = _resident_kib(path)
        assert resident * 1024 >= len(before) - 4096
        released = release_pages(layer)
        assert released >= layer.size - 2 * 4096
        after = _resident_kib(path)
        assert after * 1024 <= resident * 1024 - released + 4096
        assert after * 1024 < layer.offset + 3 * 4096  # the header's pages only
        assert bytes(data) == before  # read back from the page cache


#: Runs llama.cpp in a child: the label logits both ways, and the scorer both ways
#: with a prompt that also has a two-token label ("physio").
_COMPARE = """
import dataclasses, json, sys
sys.path.insert(0, sys.argv[1])
from satellite.nlu.llm_context import LlamaContext
from satellite.nlu.llm_rows import LabelRows, output_layer
from satellite.nlu.llm_scorer import LabelScorer, Prompt, resolve_model
texts = json.loads(sys.argv[2])
path = resolve_model("gemma3-270m")
prompt = Prompt.load("en")
context = LlamaContext(path, 1024, 512, 1)
labels = [context.tokenize(" " + label, False)[0] for label in prompt.labels]
rows = LabelRows(output_layer(path), labels)
prefix = context.tokenize(prompt.prefix(), True)
context.eval(prefix, hidden_only=False)
logits = []
for text in texts:
    query = context.tokenize(prompt.query(text), False)
    context.n_tokens = len(prefix)
    context.eval(query, hidden_only=True)
    ours = rows.logits(context.hidden)
    context.n_tokens = len(prefix)
    context.eval(query, hidden_only=False)
    full = context.logits()
    logits.append([[ours[t], float(full[t])] for t in labels])
context.close()
physio = dataclasses.replace(prompt, labels=dict(prompt.labels, physio=None))
scores = {}
for rows_only in (True, False):
    scorer = LabelScorer(path, physio, rows_only=rows_only)
    scores[str(rows_only)] = [scorer.scores(text) for text in texts]
    tokens = scorer._label_tokens["physio"]
    scorer.close()
print(json.dumps({"logits": logits, "scores": scores, "physio": tokens}))
"""
SENTENCES = [
    "I feel dizzy, please get the nurse",
    "what time is it",
    "we had fish and chips on friday",
    "I need to see the physio about my knee",
]


def test_label_logits_equal_llama_cpps_own() -> None:
    need_llm()
    out = subprocess.run(
        [sys.executable, "-c", _COMPARE, str(ROOT), json.dumps(SENTENCES)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    found = json.loads(out.strip().splitlines()[-1])
    pairs = np.array(found["logits"])
    assert pairs.shape == (len(SENTENCES), 9, 2)
    assert np.abs(pairs[..., 0] - pairs[..., 1]).max() < 1e-3
    assert np.ptp(pairs[..., 1], axis=1).min() > 1.0  # logits that differ: a real check
    assert len(found["physio"]) == 2  # a label of two tokens
    fast, full = found["scores"]["True"], found["scores"]["False"]
    for ours, theirs in zip(fast, full, strict=True):
        assert ours.keys() == theirs.keys()
        for label in ours:
            assert ours[label] == pytest.approx(theirs[label], abs=1e-3), label
    assert max(fast[3], key=lambda k: fast[3][k]) == max(full[3], key=lambda k: full[3][k])


def _status(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssFile"):
            out[key] = int(value.split()[0]) / 1024.0
    return out


def test_the_worker_keeps_the_output_matrix_out_of_memory(tmp_path: Path) -> None:
    """With the full output product the worker held ~383 MB (258 MB of it the mapped
    model file) after 20 queries; without it ~206 MB (~93 MB)."""
    need_llm()
    fallback = LlmFallback(LlmSettings(), "en", ACTIVE, tmp_path)
    try:
        assert fallback.available and fallback.worker_pid is not None
        texts = (lines("help_phrasings.txt") + lines("out_of_domain.txt"))[:20]
        for text in texts:
            assert fallback.classify(text, timeout_seconds=30.0).source == "llm"
        memory = _status(fallback.worker_pid)
    finally:
        fallback.close(wait=True)
    assert memory["RssFile"] < 150.0, memory
    assert memory["VmRSS"] < 280.0, memory
