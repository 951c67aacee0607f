"""Speech out for MQTT requests: ``say``/``response`` aloud, ``tts/request`` as a WAV.

Both run in their own threads behind bounded queues, so the frame loop only hands work
over. They need a :class:`Synthesizer`: the app passes the configured ``satellite.tts``
engine; :class:`EspeakCommandSynthesizer` (Debian's ``espeak-ng`` program) is a small
stand-in for tests and benchmarks.
"""

from __future__ import annotations

import io
import logging
import queue
import shutil
import subprocess
import threading
import wave
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..audio.chunk import AudioChunk
from ..audio.io import AudioSink
from ..errors import SatelliteError
from ..tts.base import TtsError as EngineError
from .payloads import SayDone, TtsError, TtsRequest

_LOGGER = logging.getLogger(__name__)

#: Jobs waiting beyond this are refused (and reported as errors).
QUEUE_JOBS = 16
#: eSpeak NG's output is re-cut into chunks of this length, ms.
CHUNK_MS = 60


class SynthesisError(SatelliteError):
    """Text could not be turned into audio."""


class Synthesizer(Protocol):
    """Text to audio, chunk by chunk."""

    def synthesize(self, text: str, voice: str | None) -> Iterable[AudioChunk]:
        """Audio for ``text`` in ``voice`` (None: the default voice)."""


class EspeakCommandSynthesizer:
    """eSpeak NG through its command-line program (Debian package ``espeak-ng``)."""

    def __init__(self, default_voice: str = "en-us", program: str = "espeak-ng") -> None:
        found = shutil.which(program)
        if found is None:
            raise SynthesisError(
                f"The {program!r} program is not installed. Fix: apt-get install espeak-ng "
                "(scripts/bootstrap.sh does it)"
            )
        self.program = found
        self.default_voice = default_voice
        listing = subprocess.run(
            [found, "--voices"], capture_output=True, text=True, check=False, timeout=30
        ).stdout.splitlines()[1:]
        #: Language codes of the installed voices (``en-us``, ``de``, ...).
        self.voices: tuple[str, ...] = tuple(
            sorted({line.split()[1] for line in listing if len(line.split()) > 1})
        )

    def synthesize(self, text: str, voice: str | None) -> Iterator[AudioChunk]:
        """Run espeak-ng and cut its WAV into ``CHUNK_MS`` chunks."""
        if voice is not None and self.voices and voice not in self.voices:
            # espeak-ng silently falls back to its default voice: say so instead.
            raise SynthesisError(f"unknown voice {voice!r}; installed: {', '.join(self.voices)}")
        result = subprocess.run(
            [self.program, "-v", voice or self.default_voice, "--stdout", "--", text],
            capture_output=True,
            check=False,
            timeout=60,
        )
        if result.returncode != 0 or not result.stdout.startswith(b"RIFF"):
            message = result.stderr.decode(errors="replace").strip() or "no audio"
            raise SynthesisError(f"espeak-ng failed: {message}")
        # espeak-ng writes a streaming header with unknown sizes: read the PCM directly.
        data = result.stdout
        rate = int.from_bytes(data[24:28], "little")
        start = data.find(b"data") + 8
        pcm = data[start:]
        pcm = pcm[: len(pcm) - len(pcm) % 2]
        step = rate * CHUNK_MS // 1000 * 2
        for offset in range(0, len(pcm), step):
            yield AudioChunk(rate, 2, 1, pcm[offset : offset + step], offset / 2 / rate)


def wav_bytes(chunks: Iterable[AudioChunk]) -> bytes:
    """A complete WAV file holding the chunks (format of the first chunk)."""
    out = io.BytesIO()
    writer: wave.Wave_write | None = None
    try:
        for chunk in chunks:
            if writer is None:
                writer = wave.open(out, "wb")  # noqa: SIM115 - closed in finally
                writer.setnchannels(chunk.channels)
                writer.setsampwidth(chunk.width_bytes)
                writer.setframerate(chunk.rate_hz)
            writer.writeframes(chunk.samples)
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        raise SynthesisError("the synthesiser produced no audio")
    return out.getvalue()


def scale_volume(chunk: AudioChunk, volume: float) -> AudioChunk:
    """The chunk with 16-bit samples multiplied by ``volume`` (0-1)."""
    if volume >= 1.0 or chunk.width_bytes != 2:
        return chunk
    samples = (chunk.to_int16().astype(np.float32) * volume).astype(np.int16)
    return AudioChunk.from_int16(samples, chunk.rate_hz, chunk.timestamp_seconds, chunk.channels)


Publish = Callable[[str, bytes, int], None]


@dataclass(frozen=True)
class SpeakJob:
    """Text to say aloud; ``request_id`` set when ``say/done`` must report it."""

    text: str
    request_id: str | None = None


class Speaker:
    """Says text on the audio sink, one job at a time; ``stop()`` cuts it short."""

    def __init__(
        self,
        synthesizer: Synthesizer,
        sink: AudioSink,
        publish: Publish,
        on_speaking: Callable[[bool], None],
    ) -> None:
        self._synth = synthesizer
        self._sink = sink
        self._publish = publish
        self._on_speaking = on_speaking
        self._jobs: queue.Queue[SpeakJob | None] = queue.Queue(QUEUE_JOBS)
        self._stop = threading.Event()
        self.volume = 1.0
        self.spoken = 0
        self._thread = threading.Thread(target=self._run, name="speaker", daemon=True)
        self._thread.start()

    def say(self, job: SpeakJob) -> None:
        """Queue a job; a full queue answers ``error`` at once."""
        try:
            self._jobs.put_nowait(job)
        except queue.Full:
            self._done(job, "error", "too many queued requests")

    def stop(self) -> None:
        """Cut the current job short and drop the queued ones."""
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            self._jobs.task_done()
            if job is None:  # close() asked the thread to end: keep that request
                self._jobs.put(None)
                break
            self._done(job, "stopped")
        self._stop.set()

    def idle(self) -> bool:
        """True when nothing is queued or playing."""
        return self._jobs.unfinished_tasks == 0

    def close(self) -> None:
        """Finish the queued jobs and end the thread."""
        self._jobs.put(None)
        self._thread.join(30)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                self._speak(job)
            except Exception:  # thread boundary: one bad job must not end the speaker
                _LOGGER.exception("Speaking %r failed", job)
                if job is not None:
                    self._done(job, "error", "internal error")
            finally:
                self._jobs.task_done()

    def _speak(self, job: SpeakJob) -> None:
        self._stop.clear()
        self._on_speaking(True)
        status, error = "done", None
        try:
            for chunk in self._synth.synthesize(job.text, None):
                if self._stop.is_set():
                    status = "stopped"
                    break
                self._sink.write(scale_volume(chunk, self.volume))
        except (SynthesisError, EngineError) as err:
            status, error = "error", str(err)
        finally:
            self._on_speaking(False)
        self.spoken += 1
        self._done(job, status, error)

    def _done(self, job: SpeakJob, status: str, error: str | None = None) -> None:
        if job.request_id is not None:
            self._publish("say/done", SayDone(job.request_id, status, error).to_json(), 1)


class TtsResponder:
    """Answers ``tts/request`` with a WAV on ``tts/response/<id>`` (or a JSON error)."""

    def __init__(self, synthesizer: Synthesizer, publish: Publish) -> None:
        self._synth = synthesizer
        self._publish = publish
        self._jobs: queue.Queue[TtsRequest | None] = queue.Queue(QUEUE_JOBS)
        self.answered = 0
        self._thread = threading.Thread(target=self._run, name="tts-responder", daemon=True)
        self._thread.start()

    def request(self, request: TtsRequest) -> None:
        """Queue a request; a full queue answers with an error at once."""
        try:
            self._jobs.put_nowait(request)
        except queue.Full:
            self._answer_error(request, "too many queued requests")

    def close(self) -> None:
        """Answer what is queued and end the thread."""
        self._jobs.put(None)
        self._thread.join(30)

    def _run(self) -> None:
        while True:
            request = self._jobs.get()
            if request is None:
                return
            try:
                wav = wav_bytes(self._synth.synthesize(request.text, request.voice))
            except (SynthesisError, EngineError) as err:
                self._answer_error(request, str(err))
            except Exception:  # thread boundary: answer, log, keep serving
                _LOGGER.exception("tts/request %s failed", request.id)
                self._answer_error(request, "internal error")
            else:
                self._publish(f"tts/response/{request.id}", wav, 1)
                self.answered += 1

    def _answer_error(self, request: TtsRequest, why: str) -> None:
        self._publish(f"tts/response/{request.id}", TtsError(request.id, why).to_json(), 1)
