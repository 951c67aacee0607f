"""A llama.cpp context through its C API, that can stop an evaluation at the final
hidden state: ``llama_cpp.Llama`` offers no evaluation callback, and without one
llama.cpp always multiplies by the whole output layer (see llm_rows.py)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import MissingDependencyError, SatelliteError
from .llm_rows import Floats

#: The graph node holding the final hidden state (after the last norm) in llama.cpp.
HIDDEN_NODE = b"result_norm"
#: llama.cpp's log callback: kept for the life of the process (llama.cpp keeps its address).
_QUIET: list[Any] = []


class LlamaContext:
    """One model and one sequence (not thread-safe). ``eval(..., hidden_only=True)``
    stops after the final norm: ``hidden`` is then set and ``logits`` is not."""

    def __init__(
        self,
        model_path: Path,
        n_ctx: int,
        n_batch: int,
        threads: int,
        mapped: Callable[[], object] | None = None,
    ) -> None:
        """``mapped`` is called once while the model loads, as soon as llama.cpp has
        mapped (and paged in) the whole file."""
        try:
            import llama_cpp  # noqa: PLC0415
            from llama_cpp import _ggml  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("llama-cpp-python", "llm", "The LLM fallback") from err
        self._lib: Any = llama_cpp
        self._ggml: Any = _ggml.libggml
        self._ggml.ggml_get_name.argtypes = [ctypes.c_void_p]
        self._ggml.ggml_get_name.restype = ctypes.c_char_p
        self._ggml.ggml_nbytes.argtypes = [ctypes.c_void_p]
        self._ggml.ggml_nbytes.restype = ctypes.c_size_t
        self._ggml.ggml_backend_tensor_get.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_size_t] * 2
        if not _QUIET:  # quiet, as Llama(verbose=False)
            _QUIET.append(llama_cpp.llama_log_callback(lambda level, text, data: None))
            llama_cpp.llama_log_set(_QUIET[0], None)
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        params.load_mode = llama_cpp.LLAMA_LOAD_MODE_MMAP
        if mapped is not None:
            calls: list[float] = []

            def progress(fraction: float, _data: int) -> bool:
                if not calls:  # the first tensor: after the mapping, before the rest
                    mapped()
                calls.append(fraction)
                return True

            progress_callback = llama_cpp.llama_progress_callback(progress)
            params.progress_callback = progress_callback
        self._model = llama_cpp.llama_model_load_from_file(str(model_path).encode(), params)
        if not self._model:
            raise SatelliteError(f"llama.cpp could not load {model_path}")
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self._vocab))
        self.n_embd = int(llama_cpp.llama_model_n_embd(self._model))
        self.n_batch = n_batch
        self.hidden: Floats = np.zeros(self.n_embd, dtype=np.float32)
        self._stop = False
        self._captured = False
        self._callback = llama_cpp.ggml_backend_sched_eval_callback(self._on_node)
        context = llama_cpp.llama_context_default_params()
        context.n_ctx, context.n_batch, context.n_ubatch = n_ctx, n_batch, n_batch
        context.n_threads = context.n_threads_batch = threads
        context.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED  # as Llama()
        context.no_perf = True
        context.cb_eval = self._callback
        self.ctx = llama_cpp.llama_init_from_model(self._model, context)
        if not self.ctx:
            self.close()
            raise SatelliteError(f"llama.cpp could not make a context for {model_path}")
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self.n_tokens = 0

    def _on_node(self, tensor: int, ask: bool, _data: int) -> bool:
        """ggml's evaluation callback: asked for each node; False after the hidden
        state has been copied stops the graph there (no output matrix product)."""
        if not self._stop or self._ggml.ggml_get_name(tensor) != HIDDEN_NODE:
            return not ask  # not wanted; keep going
        if ask:
            return True
        size = int(self._ggml.ggml_nbytes(tensor))
        row = self.n_embd * 4
        if size >= row:  # the last output row (zero rows: a batch without outputs)
            self._ggml.ggml_backend_tensor_get(tensor, self.hidden.ctypes.data, size - row, row)
            self._captured = True
        return False

    def tokenize(self, text: str, add_bos: bool) -> list[int]:
        data = text.encode("utf-8")
        room = len(data) + 8
        tokens = (self._lib.llama_token * room)()
        count = self._lib.llama_tokenize(self._vocab, data, len(data), tokens, room, add_bos, False)
        if count < 0:
            raise SatelliteError(f"llama.cpp could not tokenize {text[:40]!r}")
        return list(tokens[:count])

    def eval(self, tokens: list[int], hidden_only: bool) -> None:
        """Evaluate ``tokens`` after the first ``n_tokens`` (the rest is forgotten)."""
        memory = self._lib.llama_get_memory(self.ctx)
        self._lib.llama_memory_seq_rm(memory, -1, self.n_tokens, -1)
        self._stop, self._captured = hidden_only, False
        for start in range(0, len(tokens), self.n_batch):
            chunk = tokens[start : start + self.n_batch]
            last = start + len(chunk) == len(tokens)
            batch = self._batch
            batch.n_tokens = len(chunk)
            for index, token in enumerate(chunk):
                batch.token[index] = token
                batch.pos[index] = self.n_tokens + index
                batch.n_seq_id[index] = 1
                batch.seq_id[index][0] = 0
                batch.logits[index] = last and index == len(chunk) - 1
            status = self._lib.llama_decode(self.ctx, batch)
            if status != 0:
                raise SatelliteError(f"llama.cpp could not evaluate the prompt ({status})")
            self.n_tokens += len(chunk)
        if hidden_only and tokens and not self._captured:
            raise SatelliteError("llama.cpp gave no final hidden state for this model")

    def logits(self) -> Floats:
        """The last evaluated token's logits (after ``eval(..., hidden_only=False)``)."""
        pointer = self._lib.llama_get_logits_ith(self.ctx, -1)
        values: Floats = np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))
        return values

    def close(self) -> None:
        if getattr(self, "_batch", None) is not None:
            self._lib.llama_batch_free(self._batch)
            self._batch = None
        if getattr(self, "ctx", None):
            self._lib.llama_free(self.ctx)
            self.ctx = None
        if self._model:
            self._lib.llama_model_free(self._model)
            self._model = None
