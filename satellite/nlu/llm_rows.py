"""The LLM's output layer read from the GGUF file itself, for a few label tokens only.

Gemma 3 ties its output layer to its token embeddings: a 262,144 x 640 matrix (Q8_0,
170 MB of the 253 MB file). llama.cpp multiplies the final hidden state by all of it
after every evaluation, so every page of it stays resident. The scorer needs the logits
of a handful of label tokens: their rows, read here once, and the hidden state give
them (a dot product, done as llama.cpp does it: the hidden state quantized to Q8_0 the
way ggml quantizes a matrix product's input, so the logits agree to ~1e-5). Then the
matrix's pages can leave this process (``release_pages``); llama.cpp's own lookups of
the prompt's tokens bring back only their rows.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

#: Architectures whose logits are exactly output rows . final hidden state (no logit
#: soft-capping or scale), checked against llama.cpp's own logits by tests/test_llm_rows.py.
ARCHITECTURES = frozenset({"gemma3"})
_GGML_TYPE_Q8_0 = 8
_Q8_0_BLOCK = 32
_Q8_0_BYTES = 34  # float16 scale + 32 int8
_MADV_DONTNEED = 4
#: GGUF value types: struct format of the scalar ones (8 is a string, 9 an array).
_SCALARS = dict(zip((0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12), "BbHhIif?Qqd", strict=True))

Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class OutputLayer:
    """Where the output matrix (one Q8_0 row of ``n_embd`` per token) lies in the file."""

    path: Path
    offset: int  # of row 0, in bytes from the start of the file
    n_embd: int
    n_vocab: int

    @property
    def row_bytes(self) -> int:
        return self.n_embd // _Q8_0_BLOCK * _Q8_0_BYTES

    @property
    def size(self) -> int:
        return self.row_bytes * self.n_vocab


class _Reader:
    """Little-endian GGUF header fields from a buffer."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data = data
        self.pos = 0

    def scalar(self, kind: int) -> int | float | bool:
        fmt = "<" + _SCALARS[kind]
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value  # type: ignore[no-any-return]

    def string(self) -> str:
        size = int(self.scalar(10))
        text = self.data[self.pos : self.pos + size].decode("utf-8", "replace")
        self.pos += size
        return text

    def value(self, kind: int) -> int | float | bool | str | None:
        if kind == 8:
            return self.string()
        if kind != 9:
            return self.scalar(kind)
        item, count = int(self.scalar(4)), int(self.scalar(10))
        if item == 8:  # strings (the vocabulary): skipped
            for _ in range(count):
                self.pos += 8 + int(struct.unpack_from("<Q", self.data, self.pos)[0])
        else:
            self.pos += struct.calcsize("<" + _SCALARS[item]) * count
        return None


def output_layer(path: Path) -> OutputLayer | None:
    """The output matrix of a model this module can score, or None (another
    architecture, another quantization, or not a GGUF file)."""
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[:4] != b"GGUF":
            return None
        reader = _Reader(data)
        reader.pos = 8
        n_tensors, n_values = int(reader.scalar(10)), int(reader.scalar(10))
        meta: dict[str, int | float | bool | str | None] = {}
        for _ in range(n_values):
            key = reader.string()
            meta[key] = reader.value(int(reader.scalar(4)))
        tensors: dict[str, tuple[list[int], int, int]] = {}
        for _ in range(n_tensors):
            name = reader.string()
            dims = [int(reader.scalar(10)) for _ in range(int(reader.scalar(4)))]
            kind, offset = int(reader.scalar(4)), int(reader.scalar(10))
            tensors[name] = (dims, kind, offset)
        alignment = int(meta.get("general.alignment") or 32)
        start = (reader.pos + alignment - 1) // alignment * alignment
    if meta.get("general.architecture") not in ARCHITECTURES:
        return None
    found = tensors.get("output.weight") or tensors.get("token_embd.weight")
    if found is None or found[1] != _GGML_TYPE_Q8_0 or len(found[0]) != 2:
        return None
    (n_embd, n_vocab), _, offset = found
    return OutputLayer(path, start + offset, n_embd, n_vocab)


class LabelRows:
    """The output rows of some tokens, and their logits for a final hidden state."""

    def __init__(self, layer: OutputLayer, tokens: list[int]) -> None:
        self.tokens = sorted(set(tokens))
        blocks = layer.n_embd // _Q8_0_BLOCK
        raw = np.empty((len(self.tokens), blocks, _Q8_0_BYTES), dtype=np.uint8)
        with layer.path.open("rb") as file:  # read, not mapped: no page stays with us
            for index, token in enumerate(self.tokens):
                if not 0 <= token < layer.n_vocab:
                    raise ValueError(f"token {token} is outside the vocabulary")
                file.seek(layer.offset + token * layer.row_bytes)
                row = file.read(layer.row_bytes)
                raw[index] = np.frombuffer(row, dtype=np.uint8).reshape(blocks, _Q8_0_BYTES)
        self._scales = raw[:, :, :2].copy().view(np.float16)[:, :, 0].astype(np.float32)
        self._quants = raw[:, :, 2:].copy().view(np.int8).astype(np.int32)

    def logits(self, hidden: Floats) -> dict[int, float]:
        """Each token's logit: ggml's Q8_0 x Q8_0 dot product with ``hidden``."""
        scales, quants = _quantize_q8_0(hidden)
        sums = np.einsum("tbk,bk->tb", self._quants, quants).astype(np.float32)
        products = self._scales * scales[None, :] * sums
        totals = products.sum(axis=1, dtype=np.float32)
        return {token: float(totals[i]) for i, token in enumerate(self.tokens)}


def _quantize_q8_0(values: Floats) -> tuple[Floats, npt.NDArray[np.int32]]:
    """ggml's quantize_row_q8_0: per block of 32, scale max|x|/127 (kept as float16)."""
    blocks = np.asarray(values, dtype=np.float32).reshape(-1, _Q8_0_BLOCK)
    scale = (np.abs(blocks).max(axis=1) / np.float32(127.0)).astype(np.float32)
    inverse = np.divide(1.0, scale, out=np.zeros_like(scale), where=scale > 0)
    quants = np.rint(blocks * inverse[:, None].astype(np.float32)).astype(np.int32)
    return scale.astype(np.float16).astype(np.float32), quants


def release_pages(layer: OutputLayer) -> int:
    """Drop this process's resident pages of the output matrix (they stay in the page
    cache and come back on use); the bytes released."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = os.sysconf("SC_PAGE_SIZE")
    real = str(layer.path.resolve())
    first, last = layer.offset, layer.offset + layer.size
    released = 0
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[5] != real:
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        file_offset = int(fields[2], 16)
        begin = low + max(first - file_offset, 0)
        end = low + min(last - file_offset, high - low)
        begin, end = -(-begin // page) * page, end // page * page
        if end > begin and libc.madvise(begin, end - begin, _MADV_DONTNEED) == 0:
            released += end - begin
    return released
