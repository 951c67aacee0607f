"""Understanding in the frame loop: streaming STT, early endpoint, intent, dialogue.

The recognizer hears the utterance while it is spoken (pre-roll included). When the
trailing silence reaches ``early_endpoint_seconds`` and what was heard is already a
whole command, the utterance ends there instead of after the full silence timeout.
In-domain results go through the templates at once; out-of-domain speech goes to the
fallback worker (open transcription, then the LLM) and comes back through ``poll``.
"""

from __future__ import annotations

import collections
import concurrent.futures
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .audio.chunk import AudioChunk
from .config import Config
from .dialogue import Dialogue
from .events import Event, SpeechStarted, UtteranceEnded
from .frontend.recorder import Phase, UtteranceRecorder
from .nlu.events import IntentRecognized, Transcript
from .nlu.llm import LlmFallback
from .nlu.recognizer import SOURCE_LLM, IntentResult, TemplateRecognizer
from .prosody.monitor import ProsodyMonitor
from .stt.base import SpeechRecognizer, SttResult
from .stt.lexicon import pocketsphinx_model_dir
from .stt.sphinx import OpenTranscriber

_LOGGER = logging.getLogger(__name__)
EARLY_ENDPOINT_REASON = "early_endpoint"
#: Audio before the command (the wake word) the recognizer adapts to, s.
CONTEXT_SECONDS = 1.5


class RawAudio:
    """The last few seconds of unprocessed microphone frames, by timestamp."""

    def __init__(self, seconds: float = 3.0) -> None:
        self._frames: dict[float, AudioChunk] = {}
        self._order: collections.deque[float] = collections.deque()
        self._limit = int(seconds * 100)

    def add(self, frame: AudioChunk) -> None:
        key = round(frame.timestamp_seconds, 4)
        self._frames[key] = frame
        self._order.append(key)
        while len(self._order) > self._limit:
            self._frames.pop(self._order.popleft(), None)

    def get(self, processed: AudioChunk) -> AudioChunk:
        """The raw frame behind a processed one (the processed one if it is gone)."""
        return self._frames.get(round(processed.timestamp_seconds, 4), processed)

    def before(self, seconds: float, span_seconds: float) -> AudioChunk | None:
        """Raw audio from ``span_seconds`` before ``seconds`` up to it, or None."""
        keys = [k for k in self._order if seconds - span_seconds <= k < seconds - 1e-6]
        if not keys:
            return None
        first = self._frames[keys[0]]
        data = b"".join(self._frames[k].samples for k in keys)
        return AudioChunk(
            first.rate_hz, first.width_bytes, first.channels, data, first.timestamp_seconds
        )


@dataclass(slots=True)
class UtteranceReport:
    """Everything known about one understood utterance (for the CLI and benchmarks)."""

    utterance_id: str
    start_seconds: float
    end_seconds: float
    reason: str
    stt: SttResult | None = None
    intent: IntentResult | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)


class Understanding:
    """Drives a SpeechRecognizer from recorder events and turns results into intents."""

    name = "understanding"

    def __init__(
        self,
        recognizer: SpeechRecognizer,
        templates: TemplateRecognizer,
        fallback: LlmFallback | None = None,
        open_transcribe: Callable[[AudioChunk], str] | None = None,
        dialogue: Dialogue | None = None,
        early_endpoint_seconds: float = 0.25,
    ) -> None:
        self.recognizer = recognizer
        self.templates = templates
        self.fallback = fallback
        self.open_transcribe = open_transcribe
        self.dialogue = dialogue
        self.early_endpoint_seconds = early_endpoint_seconds
        #: Speech rate per utterance, fed the recognised words (set by the builder).
        self.prosody: ProsodyMonitor | None = None
        self.reports: dict[str, UtteranceReport] = {}
        self._pending: dict[str, concurrent.futures.Future[IntentResult]] = {}
        self._checked_silence = False
        self._listening = False

    def observe(
        self,
        frame: AudioChunk,
        new_events: list[Event],
        recorder: UtteranceRecorder,
        raw: RawAudio | None = None,
    ) -> list[Event]:
        """Called for every frame the recorder saw, with the events it just produced.

        The recognizer hears the microphone as it was (``raw``), not the denoised audio:
        noise suppression cost the acoustic model accuracy, clean and noisy alike.
        """
        out: list[Event] = []
        started = any(isinstance(e, SpeechStarted) for e in new_events)
        if started:
            frames = [raw.get(f) if raw else f for f in recorder.frames]
            first = frames[0].timestamp_seconds if frames else frame.timestamp_seconds
            context = None
            if raw is not None and not recorder.continuous:
                context = raw.before(first, CONTEXT_SECONDS)
            self.recognizer.start(first, context)
            for past in frames:
                self.recognizer.process(past)
            self._listening = True
            self._checked_silence = False
        elif self._listening and recorder.phase is Phase.IN_SPEECH:
            self.recognizer.process(raw.get(frame) if raw else frame)
            out.extend(self._maybe_end_early(frame, recorder))
        for event in [*new_events, *out]:
            if isinstance(event, UtteranceEnded) and self._listening:
                self._listening = False
                out.extend(self._understand(event))
        return out

    def _maybe_end_early(self, frame: AudioChunk, recorder: UtteranceRecorder) -> list[Event]:
        silence = recorder.silence_seconds
        if silence <= 0:
            self._checked_silence = False
            return []
        if (
            self.early_endpoint_seconds <= 0
            or self._checked_silence
            or silence < self.early_endpoint_seconds
        ):
            return []
        self._checked_silence = True
        if not self.recognizer.is_complete():
            return []
        return recorder.end_now(frame.end_seconds, EARLY_ENDPOINT_REASON)

    def _understand(self, utterance: UtteranceEnded) -> list[Event]:
        report = UtteranceReport(
            utterance.utterance_id, utterance.start_seconds, utterance.end_seconds, utterance.reason
        )
        self.reports[utterance.utterance_id] = report
        started = time.perf_counter()
        stt = self.recognizer.finish()
        report.stt = stt
        report.timings_ms["stt_finish"] = _ms_since(started)
        now = utterance.timestamp_seconds
        events: list[Event] = [
            Transcript(
                timestamp_seconds=now,
                utterance_id=utterance.utterance_id,
                text=stt.text,
                confidence=stt.confidence,
                in_grammar=stt.in_grammar,
            )
        ]
        if self.prosody is not None and utterance.audio is not None:
            # Words from a grammar forced onto out-of-domain speech are not trusted.
            words = stt.words if stt.in_grammar else None
            events.extend(self.prosody.process(utterance, words=words))
        if stt.in_grammar:
            started = time.perf_counter()
            result = self.templates.recognize(stt.text)
            report.timings_ms["nlu"] = _ms_since(started)
            if result.intent is not None:
                result = IntentResult(
                    result.intent, result.slots, stt.confidence, result.source, result.text
                )
                return events + self._conclude(utterance.utterance_id, result, now)
        audio = utterance.audio
        if self.fallback is not None and audio is not None:
            self._pending[utterance.utterance_id] = self.fallback.submit_job(
                lambda: self._fallback(audio, report)
            )
            return events
        return events + self._conclude(
            utterance.utterance_id, IntentResult(None, text=stt.text), now
        )

    def _fallback(self, audio: AudioChunk, report: UtteranceReport) -> IntentResult:
        """In the worker: free transcription, then the LLM (no timeout: we are in it)."""
        assert self.fallback is not None
        started = time.perf_counter()
        text = (
            self.open_transcribe(audio)
            if self.open_transcribe
            else (report.stt.text if report.stt else "")
        )
        report.timings_ms["open_stt"] = _ms_since(started)
        started = time.perf_counter()
        result = self.fallback.classify_now(text)
        report.timings_ms["llm"] = _ms_since(started)
        return result

    def poll(self, now_seconds: float, wait_seconds: float = 0.0) -> list[Event]:
        """Collect fallback results that are ready (waiting up to ``wait_seconds``)."""
        events: list[Event] = []
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
            events.extend(self._conclude(utterance_id, result, now_seconds))
        if self.dialogue is not None:
            events.extend(self.dialogue.tick(now_seconds))
        return events

    def _conclude(self, utterance_id: str, result: IntentResult, now: float) -> list[Event]:
        report = self.reports.get(utterance_id)
        if report is not None:
            report.intent = result
        events: list[Event] = [
            IntentRecognized(
                timestamp_seconds=now,
                utterance_id=utterance_id,
                intent=result.intent,
                slots=dict(result.slots),
                confidence=result.confidence,
                source=result.source,
                text=result.text,
            )
        ]
        if self.dialogue is not None:
            events.extend(self.dialogue.handle(result, utterance_id, now))
        return events

    def reset(self) -> None:
        """Drop the utterance in progress."""
        self.recognizer.reset()
        self._listening = False
        self._checked_silence = False


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 2)


def build_understanding(
    config: Config, use_llm: bool = True, with_dialogue: bool = True
) -> Understanding:
    """Recognizer, templates, fallback and dialogue from the configuration."""
    from .stt.factory import intent_set_from_config, make_recognizer  # noqa: PLC0415

    intent_set = intent_set_from_config(config)
    recognizer = make_recognizer(config, intent_set)
    fallback = None
    if use_llm and config.llm.enabled:
        fallback = LlmFallback(config.llm, config.satellite.language, config.nlu.intents)
    open_transcribe = None
    if config.stt.open_transcripts and config.stt.engine == "pocketsphinx":
        open_transcribe = _LazyOpenTranscriber(config.satellite.language)
    dialogue = Dialogue(config.nlu.ha_timeout_seconds) if with_dialogue else None
    understanding = Understanding(
        recognizer,
        TemplateRecognizer(intent_set),
        fallback,
        open_transcribe,
        dialogue,
        config.stt.early_endpoint_ms / 1000.0,
    )
    if config.prosody.enabled:
        understanding.prosody = ProsodyMonitor(config.prosody)
    return understanding


class _LazyOpenTranscriber:
    """Loads the full language model on first use (in the fallback worker)."""

    def __init__(self, language: str) -> None:
        self.language = language
        self._transcriber: OpenTranscriber | None = None

    def __call__(self, audio: AudioChunk) -> str:
        if self._transcriber is None:
            self._transcriber = OpenTranscriber(pocketsphinx_model_dir(self.language))
        return self._transcriber.transcribe(audio)
