"""Home Assistant's slot lists (the names and areas it exposes) -> a new speech grammar.

HA publishes its exposed entity names and areas, retained, on ``slots``. They replace the
configured ``nlu.entities`` and ``nlu.areas`` (``merge_slots``): the grammar and the
templates are built again for them. Compiling the grammar and loading the decoders takes
a second or two (bench/slot_rebuild.py), so it runs in a worker thread; the frame loop
picks the result up in ``poll`` and swaps it in between utterances
(``Understanding.replace_recognizer``), the old grammar serving until then. Through the
GIL the build delays a few frames by 50-120 ms (the decoders load in C without letting go
of it); the capture queue holds the audio meanwhile. A build that fails is logged and the
old grammar stays in use.

The build's peak is bounded by the grammar itself: slot lists are spliced into the
minimised templates as word networks (``stt/grammar.py``), so the compile needs a few MB
whatever the names, and the new decoders are the only large allocation. After a swap the
worker hands the old decoders' freed heap back to the system (``give_back_memory``):
glibc keeps freed pages of a thread's arena otherwise, and RSS grew with every update.
A subprocess would not save more: the decoders must live in this process.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ..nlu.intents import Entity, load_intent_set, merge_slots
from ..nlu.recognizer import TemplateRecognizer
from ..stt.base import SpeechRecognizer
from ..stt.factory import make_recognizer
from ..stt.fsg import Grammar
from .core import Understanding
from .saved_slots import SavedSlots

_LOGGER = logging.getLogger(__name__)

#: Entity and area lists that a grammar is built from.
SlotLists = tuple[tuple[Entity, ...], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class BuiltGrammar:
    """A recognizer and templates for some slot lists, ready to swap in."""

    lists: SlotLists
    #: None when the engine has no grammar (whisper, vosk): the current one stays.
    recognizer: SpeechRecognizer | None
    templates: TemplateRecognizer
    #: When it was built, Unix seconds.
    built: float


@dataclass(frozen=True, slots=True)
class GrammarStatus:
    """What the grammar in use holds (for the ``info`` payload, so HA can show it)."""

    #: Entity names the speech grammar holds (those with a pronunciation), areas.
    names: int
    areas: int
    #: When it was built, Unix seconds.
    built: float


def give_back_memory() -> bool:
    """Return freed heap pages to the system (glibc's ``malloc_trim(0)``); False where
    there is no such call."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    return bool(trim(0))


class SlotGrammar:
    """Rebuilds the recognizer and templates of ``understanding`` for HA's slot lists.

    Call ``update`` and ``poll`` from the frame loop's thread only; the build alone runs
    in the worker. At most one build runs at a time; lists that arrive meanwhile wait
    for it, and only the newest lists are built and swapped in.
    """

    def __init__(
        self,
        config: Config,
        understanding: Understanding,
        saved: SavedSlots | None = None,
        lists: SlotLists | None = None,
    ) -> None:
        """``lists``: what ``understanding`` was built from, when not the configured
        lists; ``saved``: where HA's lists are kept once swapped in (saved_slots.py)."""
        self.config = config
        self.understanding = understanding
        #: The lists the grammar in use was built from.
        self.lists: SlotLists = lists or (config.nlu.entities, tuple(config.nlu.areas))
        self._saved = saved
        self._sent: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        #: Grammars swapped in, builds that failed.
        self.swaps = 0
        self.failures = 0
        #: When the grammar in use was built, Unix seconds.
        self.built = time.time()
        #: Told what the grammar holds after each swap (run: the ``info`` payload).
        self.on_swap: Callable[[GrammarStatus], None] | None = None
        self._wanted: SlotLists | None = None
        self._job: tuple[SlotLists, concurrent.futures.Future[BuiltGrammar]] | None = None
        self._ready: BuiltGrammar | None = None
        self._failed: SlotLists | None = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._giving_back: concurrent.futures.Future[bool] | None = None

    @property
    def pending(self) -> bool:
        """True while a build runs or a built grammar waits for the end of an utterance."""
        return self._job is not None or self._ready is not None

    def update(self, names: tuple[str, ...], areas: tuple[str, ...]) -> None:
        """HA exposes these names and areas: build for them unless they are in use."""
        self._wanted = merge_slots(self.config.nlu.entities, names, areas)
        self._sent = (tuple(names), tuple(areas))
        self._failed = None  # lists sent again get another try
        self.poll()

    def poll(self) -> bool:
        """Collect a finished build, swap it in between utterances, start the next one.

        True when a new recognizer was swapped in by this call.
        """
        self._collect()
        swapped = False
        ready = self._ready
        if ready is not None and ready.lists != self._wanted:
            self._ready = None  # newer lists arrived while it was built
        elif ready is not None:
            recognizer = ready.recognizer or self.understanding.recognizer
            if self.understanding.replace_recognizer(recognizer, ready.templates):
                self._ready = None
                self.lists = ready.lists
                self.built = ready.built
                self.swaps += 1
                swapped = True
                if self._saved is not None:  # the next start begins with them
                    self._saved.save(*self._sent)
                if self._executor is not None:  # after the old decoders are gone
                    self._giving_back = self._executor.submit(give_back_memory)
                _LOGGER.info(
                    "Speech grammar now has Home Assistant's %d names and %d areas",
                    len(ready.lists[0]),
                    len(ready.lists[1]),
                )
                if self.on_swap is not None:
                    self.on_swap(self.status())
        self._start()
        return swapped

    def status(self) -> GrammarStatus:
        """How many names and areas the grammar in use holds, and when it was built."""
        grammar = getattr(self.understanding.recognizer, "grammar", None)
        if isinstance(grammar, Grammar):
            sizes = grammar.list_sizes
            return GrammarStatus(sizes.get("name", 0), sizes.get("area", 0), self.built)
        return GrammarStatus(len(self.lists[0]), len(self.lists[1]), self.built)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the running build (if any) and the memory given back after a
        swap are done; ``poll`` then collects the build."""
        running: list[concurrent.futures.Future[Any]] = []
        if self._giving_back is not None:
            running.append(self._giving_back)
        if self._job is not None:
            running.append(self._job[1])
        concurrent.futures.wait(running, timeout)

    def close(self) -> None:
        """Stop building: a build in progress is abandoned, not waited for."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        self._job = None
        self._ready = None

    def _collect(self) -> None:
        if self._job is None or not self._job[1].done():
            return
        lists, future = self._job
        self._job = None
        try:
            self._ready = future.result()
        except Exception:
            self.failures += 1
            self._failed = lists
            _LOGGER.exception(
                "Could not rebuild the speech grammar for Home Assistant's %d names and %d "
                "areas; the previous grammar stays in use",
                len(lists[0]),
                len(lists[1]),
            )

    def _start(self) -> None:
        wanted = self._wanted
        if self.pending or wanted is None or wanted in (self.lists, self._failed):
            return
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="grammar"
            )
        _LOGGER.info(
            "Building the speech grammar for Home Assistant's %d names and %d areas",
            len(wanted[0]),
            len(wanted[1]),
        )
        self._job = (wanted, self._executor.submit(self._build, wanted))

    def _build(self, lists: SlotLists) -> BuiltGrammar:
        """In the worker thread: the intent set, the grammar and its decoders."""
        entities, areas = lists
        config = self.config
        intent_set = load_intent_set(
            config.satellite.language, config.nlu.intents, entities, areas, config.satellite.area
        )
        recognizer = (
            make_recognizer(config.stt, config.satellite.language, intent_set)
            if config.stt.engine == "pocketsphinx"
            else None
        )
        return BuiltGrammar(lists, recognizer, TemplateRecognizer(intent_set), time.time())
