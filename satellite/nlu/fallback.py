"""Out-of-domain utterances in the LLM's job thread: open transcription, then the LLM.

The frame loop hands a job in and goes on; ``collect`` gives the results that are ready
(or, waiting, every result: a job that does not finish in time or fails is "not
understood").
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections.abc import Callable, Iterator

from ..audio.chunk import AudioChunk
from ..timing import ms_since
from .help_answers import HELP, help_check_intent_set
from .llm import LlmFallback
from .recognizer import SOURCE_LLM, IntentResult, TemplateRecognizer

_LOGGER = logging.getLogger(__name__)


class FallbackJobs:
    """The utterances ``fallback`` is working out, by utterance id.

    The transcript is read with the commands' ``templates`` too, and with the things
    said that are no command ("yes", "I'm fine"). Words they read as something other
    than a call for help (a command: "be quiet"; "I'm fine") are not taken for a call
    the LLM reads into them without a word of help or distress: the LLM read flite's
    "be quiet", transcribed exactly, as a call for help in every room (0.46), and "I'm
    fine" and "sorry" too."""

    def __init__(
        self,
        fallback: LlmFallback,
        open_transcribe: Callable[[AudioChunk], str] | None = None,
        templates: TemplateRecognizer | None = None,
    ) -> None:
        self.fallback = fallback
        self.open_transcribe = open_transcribe
        self.templates = templates
        #: The not-commands' templates, parsed in the job thread when first needed.
        self._no_command: TemplateRecognizer | None = None
        self._pending: dict[str, concurrent.futures.Future[IntentResult]] = {}

    def __contains__(self, utterance_id: object) -> bool:
        return utterance_id in self._pending

    def __len__(self) -> int:
        """Jobs whose results have not been collected yet."""
        return len(self._pending)

    def submit(
        self, utterance_id: str, audio: AudioChunk, heard: str, timings_ms: dict[str, float]
    ) -> None:
        """Work out what ``audio`` asks for: transcribed openly (``heard``, what the
        grammar search made of it, without an open transcriber), then classified by the
        LLM; each step's time goes into ``timings_ms``."""
        self._pending[utterance_id] = self.fallback.submit_job(
            lambda: self._work_out(audio, heard, timings_ms)
        )

    def _work_out(
        self, audio: AudioChunk, heard: str, timings_ms: dict[str, float]
    ) -> IntentResult:
        """In the job thread: free transcription, then the LLM (no timeout: we are in it)."""
        started = time.perf_counter()
        text = self.open_transcribe(audio) if self.open_transcribe else heard
        timings_ms["open_stt"] = ms_since(started)
        started = time.perf_counter()
        result = self.fallback.classify_now(text)
        timings_ms["llm"] = ms_since(started)
        if result.intent == HELP and not result.unmistakable and self._other_words(text):
            return IntentResult(None, {}, result.confidence, SOURCE_LLM, text)
        return result

    def _other_words(self, text: str) -> bool:
        """Whether a template reads ``text`` as something other than a call for help."""
        if self.templates is None:
            return False
        if self._no_command is None:
            language = self.templates.intent_set.language
            self._no_command = TemplateRecognizer(help_check_intent_set(language))
        readers = (self.templates, self._no_command)
        return any(reader.recognize(text).intent not in (None, HELP) for reader in readers)

    def collect(self, wait_seconds: float = 0.0) -> Iterator[tuple[str, IntentResult]]:
        """The results that are ready with their utterance ids, in the order the jobs
        came in, waiting up to ``wait_seconds`` in all: then the rest count as not
        understood (with no wait, they are kept for later)."""
        deadline = time.monotonic() + wait_seconds
        for utterance_id, future in list(self._pending.items()):
            timeout = max(0.0, deadline - time.monotonic())
            try:
                result = future.result(timeout=timeout)
            except concurrent.futures.TimeoutError:
                if wait_seconds <= 0:
                    continue
                result = IntentResult(None, source=SOURCE_LLM)
                _LOGGER.warning("Fallback for %s did not finish in time", utterance_id)
            except Exception:
                _LOGGER.exception("Fallback for %s failed", utterance_id)
                result = IntentResult(None, source=SOURCE_LLM)
            del self._pending[utterance_id]
            yield utterance_id, result
