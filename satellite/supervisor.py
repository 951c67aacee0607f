"""The supervisor of the frame loop's stages: a stage that raises is reported, reset, and
replaced for that frame by a neutral result, so listening goes on."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from .audio.chunk import AudioChunk
from .events import Event, StageError

_LOGGER = logging.getLogger(__name__)
#: A failing stage is logged with its traceback at most this often, s (wall clock).
ERROR_LOG_INTERVAL_SECONDS = 30.0

T = TypeVar("T")


class Resettable(Protocol):
    """What the supervisor needs of a stage: ``reset()`` (and a ``name``, if it has one)."""

    def reset(self) -> None:
        """Forget all state."""


class Supervisor:
    """Runs stage calls; counts, logs (rate-limited) and reports failures."""

    def __init__(self) -> None:
        self.errors_by_stage: dict[str, int] = {}
        self._last_log: dict[str, float] = {}

    def guard(
        self,
        stage: Resettable,
        call: Callable[[AudioChunk], T],
        frame: AudioChunk,
        fallback: T,
        events: list[Event],
    ) -> T:
        """``call(frame)``; if it raises, a ``StageError`` in ``events``, the stage reset
        and ``fallback`` returned."""
        try:
            return call(frame)
        except Exception as err:  # the supervisor boundary: one stage must not stop the loop
            name = getattr(stage, "name", type(stage).__name__)
            self.errors_by_stage[name] = self.errors_by_stage.get(name, 0) + 1
            now = time.monotonic()
            if now - self._last_log.get(name, -1e9) >= ERROR_LOG_INTERVAL_SECONDS:
                self._last_log[name] = now
                _LOGGER.exception(
                    "Stage %s failed (%d so far); resetting it", name, self.errors_by_stage[name]
                )
            events.append(
                StageError(
                    timestamp_seconds=round(frame.timestamp_seconds, 3),
                    stage=name,
                    error=type(err).__name__,
                    message=str(err),
                )
            )
            try:
                stage.reset()
            except Exception:
                _LOGGER.exception("Stage %s also failed to reset", name)
            return fallback
