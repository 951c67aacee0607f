"""eSpeak NG in-process through ctypes, audio streamed from its synthesis callback.

libespeak-ng keeps global state, so one worker thread per process owns it: it loads the
library (the ``espeakng-loader`` wheel's copy with its data, else Debian's
``libespeak-ng1``), and runs every call. ``espeak_Synth`` in synchronous mode calls our
callback with each block of samples as it makes them (1324 samples, 60 ms at
22.05 kHz); the callback hands each block to the consumer's generator through a queue,
so the first audio is out in well under a millisecond.

Text is synthesised one sentence (at most ``MAX_PIECE_CHARS``) at a time, and the next
sentence only once the consumer has taken the last one's audio: memory stays bounded
whatever the length of the text, and the worker is never held by a slow consumer, so
other synthesis (a WAV for Home Assistant while a reply plays) gets its turn between
sentences. When the consumer stops iterating, the next callback returns 1 and eSpeak
abandons the sentence.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import queue
import threading
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any, TypeVar

from ..audio.chunk import AudioChunk
from ..errors import MissingDependencyError
from .base import TtsError, UnknownVoiceError, clean_text
from .text import SplitterSettings, split_text

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")

AUDIO_OUTPUT_SYNCHRONOUS = 2
POS_CHARACTER = 1
CHARS_UTF8 = 1
ENDPAUSE = 0x1000
PARAM_RATE, PARAM_VOLUME, PARAM_PITCH = 1, 2, 3
PHONEMES_IPA = 0x02
EE_OK = 0
#: Longest piece of text synthesised in one call, characters (about 20 s of speech).
MAX_PIECE_CHARS = 300
DEFAULT_VOICE = "en-us+klatt3"
_END = object()
#: Sentences only: eSpeak NG makes its own clause pauses within one.
_PIECES = SplitterSettings(long_sentence_words=1_000_000, max_chars=MAX_PIECE_CHARS)

_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


class _Voice(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_char_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


class _Job:
    """One synthesis: its text and voice, where its audio goes, and a cancel flag."""

    def __init__(self, text: bytes, params: tuple[str, int, int, int]) -> None:
        self.text = text
        self.params = params
        self.out: queue.Queue[Any] = queue.Queue()
        self.cancelled = threading.Event()
        self.started = False

    def put(self, item: Any) -> bool:
        """Hand an item to the consumer; False once the consumer has gone."""
        if self.cancelled.is_set():
            return False
        self.out.put(item)
        return True


def _load_library() -> tuple[ctypes.CDLL, bytes | None]:
    """The wheel's library and data when installed, else the system's libespeak-ng."""
    try:
        import espeakng_loader  # noqa: PLC0415
    except ImportError:
        name = ctypes.util.find_library("espeak-ng")
        if name is None:
            raise MissingDependencyError("espeakng-loader", None, "eSpeak NG speech") from None
        return ctypes.CDLL(name), None
    return (
        ctypes.CDLL(espeakng_loader.get_library_path()),
        espeakng_loader.get_data_path().encode(),
    )


class _EspeakWorker:
    """The one thread that owns libespeak-ng."""

    def __init__(self) -> None:
        self._calls: queue.Queue[Callable[[], None]] = queue.Queue()
        self._job: _Job | None = None
        self._current: tuple[str, int, int, int] | None = None
        # The handler is looked up on each call, so it can be wrapped (tests count calls).
        self._callback = _SynthCallback(
            lambda wav, n, events: self._on_audio(wav, n, events)  # noqa: PLW0108
        )
        self.version = ""
        self.rate_hz = 0
        thread = threading.Thread(target=self._run, name="espeak", daemon=True)
        thread.start()
        self.call(self._initialize)

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the worker thread and return its result (or raise its error)."""
        future: Future[T] = Future()

        def run() -> None:
            try:
                future.set_result(fn())
            except Exception as err:  # noqa: BLE001 - handed to the caller
                future.set_exception(err)

        self._calls.put(run)
        return future.result()

    def submit(self, job: _Job) -> None:
        """Synthesise ``job`` on the worker; its audio arrives in ``job.out``."""
        self._calls.put(lambda: self._synthesize(job))

    def _run(self) -> None:
        while True:
            self._calls.get()()

    # --- on the worker thread -----------------------------------------------------

    def _initialize(self) -> None:
        lib, data = _load_library()
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        lib.espeak_ListVoices.argtypes = [ctypes.c_void_p]
        lib.espeak_ListVoices.restype = ctypes.POINTER(ctypes.POINTER(_Voice))
        lib.espeak_TextToPhonemes.argtypes = [
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
        ]
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        lib.espeak_Info.argtypes = [ctypes.c_void_p]
        lib.espeak_Info.restype = ctypes.c_char_p
        rate = lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, data, 0)
        if rate <= 0:
            raise TtsError(
                f"eSpeak NG failed to initialise (data {data!r}). Fix: reinstall "
                "espeakng-loader, or install Debian's espeak-ng-data"
            )
        lib.espeak_SetSynthCallback(self._callback)
        self._lib = lib
        self.rate_hz = rate
        self.version = (lib.espeak_Info(None) or b"").decode()
        _LOGGER.debug("eSpeak NG %s at %d Hz, data %s", self.version, rate, data)

    def _apply(self, params: tuple[str, int, int, int]) -> None:
        if params == self._current:
            return
        voice, rate_wpm, pitch, volume = params
        new_voice = self._current is None or voice != self._current[0]
        if new_voice and self._lib.espeak_SetVoiceByName(voice.encode()) != EE_OK:
            self._current = None
            raise UnknownVoiceError(_unknown_voice_message(voice, self._voices()))
        lib = self._lib
        lib.espeak_SetParameter(PARAM_RATE, rate_wpm, 0)
        lib.espeak_SetParameter(PARAM_PITCH, pitch, 0)
        lib.espeak_SetParameter(PARAM_VOLUME, volume, 0)
        self._current = params

    def _synthesize(self, job: _Job) -> None:
        try:
            self._apply(job.params)
            if job.text and not job.cancelled.is_set():
                self._job = job
                status = self._lib.espeak_Synth(
                    job.text,
                    len(job.text) + 1,
                    0,
                    POS_CHARACTER,
                    0,
                    CHARS_UTF8 | ENDPAUSE,
                    None,
                    None,
                )
                if status != EE_OK and not job.cancelled.is_set():
                    raise TtsError(f"eSpeak NG synthesis failed with status {status}")
        except Exception as err:  # noqa: BLE001 - handed to the consumer
            job.put(err)
        finally:
            self._job = None
        job.put(_END)

    def _on_audio(self, wav: Any, num_samples: int, _events: Any) -> int:
        job = self._job
        if job is None or job.cancelled.is_set():
            return 1
        if num_samples > 0:
            first = job.out.empty() and not job.started
            if not job.put(ctypes.string_at(wav, num_samples * 2)):
                return 1
            if first:
                # On one core the consumer would otherwise wait for the whole sentence.
                job.started = True
                os.sched_yield()
        return 0

    def _voices(self) -> list[str]:
        out: list[str] = []
        array = self._lib.espeak_ListVoices(None)
        index = 0
        while array[index]:
            voice = array[index].contents
            if voice.name:
                out.append((voice.identifier or voice.name).decode(errors="replace"))
            index += 1
        return out

    def voices(self) -> list[str]:
        """Voice identifiers (language/name), e.g. ``gmw/en-US``."""
        return self.call(self._voices)

    def phonemes(self, text: str, voice: str) -> str:
        """IPA phonemes of ``text`` (one clause: eSpeak drops the punctuation)."""

        def run() -> str:
            rest = self._current[1:] if self._current is not None else (175, 50, 100)
            self._apply((voice, *rest))
            data = ctypes.c_char_p(text.encode())
            pointer = ctypes.pointer(data)
            parts: list[str] = []
            while pointer.contents.value:
                result = self._lib.espeak_TextToPhonemes(pointer, CHARS_UTF8, PHONEMES_IPA)
                parts.append((result or b"").decode(errors="replace"))
            return " ".join(p.strip() for p in parts if p.strip())

        return self.call(run)


_WORKER: _EspeakWorker | None = None
_WORKER_LOCK = threading.Lock()


def espeak_worker() -> _EspeakWorker:
    """The process's eSpeak NG worker, started on first use (~10 ms)."""
    global _WORKER  # noqa: PLW0603 - one library instance per process
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = _EspeakWorker()
        return _WORKER


class EspeakEngine:
    """eSpeak NG voice, rate, pitch and volume; streams 22.05 kHz 16-bit mono chunks."""

    name = "espeak"

    def __init__(
        self, voice: str = DEFAULT_VOICE, rate_wpm: int = 160, pitch: int = 50, volume: int = 100
    ) -> None:
        self._worker = espeak_worker()
        self.voice = voice
        self.rate_wpm = rate_wpm
        self.pitch = pitch
        self.volume = volume
        self.rate_hz = self._worker.rate_hz

    def warm_up(self) -> None:
        """Load the voice now (~5-80 ms) rather than in the first reply."""
        for _ in self.synthesize("", self.voice):
            pass

    def synthesize(self, text: str, voice: str | None = None) -> Generator[AudioChunk, None, None]:
        """Stream ``text`` spoken; an unknown voice raises UnknownVoiceError."""
        params = (voice or self.voice, self.rate_wpm, self.pitch, self.volume)
        if len(text) <= MAX_PIECE_CHARS:
            pieces = [clean_text(text).strip()]  # "" too: the voice is still checked
        else:
            pieces = list(split_text([text], _PIECES)) or [""]
        emitted = 0
        for piece in pieces:
            job = _Job(piece.encode(), params)
            self._worker.submit(job)
            try:
                while True:
                    item = job.out.get()
                    if item is _END:
                        break
                    if isinstance(item, Exception):
                        raise item
                    yield AudioChunk(self.rate_hz, 2, 1, item, emitted / self.rate_hz)
                    emitted += len(item) // 2
            finally:
                job.cancelled.set()

    def voices(self) -> list[str]:
        """Names of the voices eSpeak NG knows, as ``voice`` takes them (``en-us``;
        a variant such as ``+f3`` can be added)."""
        return sorted({identifier.split("/")[-1].lower() for identifier in self._worker.voices()})

    def phonemes(self, text: str, voice: str | None = None) -> str:
        """IPA phonemes of one clause, words separated by spaces."""
        return self._worker.phonemes(clean_text(text), voice or self.voice)

    def close(self) -> None:
        """The library stays loaded for the process; nothing to release."""


def _unknown_voice_message(voice: str, known: list[str]) -> str:
    english = sorted({v.split("/")[-1].lower() for v in known if "/en" in v.lower()})
    return (
        f"Unknown eSpeak NG voice {voice!r}. Fix: use a voice name such as "
        f"{', '.join(english[:8]) or 'en-us'} (optionally with a variant: en-us+f3), "
        f"or list all {len(known)} with 'pocket-satellite say --list-voices'"
    )
