"""Home Assistant's slot lists (the names and areas it exposes) -> a new speech grammar.

HA publishes its exposed entity names and areas, retained, on ``slots``. They replace the
configured ``nlu.entities`` and ``nlu.areas`` (``merge_slots``): the grammar and the
templates are built again for them. Compiling the grammar and loading the decoders takes
most of a second (0.7 s on one x86 core for the default intents, bench/slot_rebuild.py),
so it runs in a worker thread; the frame loop picks the result up in ``poll`` and swaps
it in between utterances (``Understanding.replace_recognizer``). Through the GIL the
build delays a few frames by 50-120 ms (the decoders load in C without letting go of
it); the capture queue holds the audio meanwhile. A build that fails is logged and the
old grammar stays in use.
"""

from __future__ import annotations

import concurrent.futures
import logging
from dataclasses import dataclass

from ..config import Config
from ..nlu.intents import Entity, load_intent_set, merge_slots
from ..nlu.recognizer import TemplateRecognizer
from ..stt.base import SpeechRecognizer
from ..stt.factory import make_recognizer
from .core import Understanding

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


class SlotGrammar:
    """Rebuilds the recognizer and templates of ``understanding`` for HA's slot lists.

    Call ``update`` and ``poll`` from the frame loop's thread only; the build alone runs
    in the worker. At most one build runs at a time; lists that arrive meanwhile wait
    for it, and only the newest lists are built and swapped in.
    """

    def __init__(self, config: Config, understanding: Understanding) -> None:
        self.config = config
        self.understanding = understanding
        #: The lists the grammar in use was built from.
        self.lists: SlotLists = (config.nlu.entities, tuple(config.nlu.areas))
        #: Grammars swapped in, builds that failed.
        self.swaps = 0
        self.failures = 0
        self._wanted: SlotLists | None = None
        self._job: tuple[SlotLists, concurrent.futures.Future[BuiltGrammar]] | None = None
        self._ready: BuiltGrammar | None = None
        self._failed: SlotLists | None = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None

    @property
    def pending(self) -> bool:
        """True while a build runs or a built grammar waits for the end of an utterance."""
        return self._job is not None or self._ready is not None

    def update(self, names: tuple[str, ...], areas: tuple[str, ...]) -> None:
        """HA exposes these names and areas: build for them unless they are in use."""
        self._wanted = merge_slots(self.config.nlu.entities, names, areas)
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
                self.swaps += 1
                swapped = True
                _LOGGER.info(
                    "Speech grammar now has Home Assistant's %d names and %d areas",
                    len(ready.lists[0]),
                    len(ready.lists[1]),
                )
        self._start()
        return swapped

    def wait(self, timeout: float | None = None) -> None:
        """Block until the running build (if any) is done; ``poll`` then collects it."""
        if self._job is not None:
            concurrent.futures.wait([self._job[1]], timeout)

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
        return BuiltGrammar(lists, recognizer, TemplateRecognizer(intent_set))
