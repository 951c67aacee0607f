"""``tts/request`` answered with a WAV on ``tts/response/<id>``: a thin payload adapter.

The engine is the satellite's own TTS engine (the one the speaker uses); this module only
turns its chunks into a WAV file, or its error into a JSON ``TtsFailed``, in its own
thread behind a bounded queue so the frame loop only hands the request over.
"""

from __future__ import annotations

import io
import logging
import queue
import threading
import wave
from collections.abc import Callable, Iterable

from ..audio.chunk import AudioChunk
from ..tts.base import TtsEngine, TtsError
from .payloads import TtsFailed, TtsRequest

_LOGGER = logging.getLogger(__name__)

#: Requests waiting beyond this are refused (and answered with an error).
QUEUE_JOBS = 16

#: Publish raw bytes under the satellite's base topic: (path, payload, qos).
Publish = Callable[[str, bytes, int], None]


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
        raise TtsError("the synthesiser produced no audio")
    return out.getvalue()


class TtsResponder:
    """Answers ``tts/request`` with a WAV on ``tts/response/<id>`` (or a JSON error)."""

    def __init__(self, engine: TtsEngine, publish: Publish) -> None:
        self._engine = engine
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
                wav = wav_bytes(self._engine.synthesize(request.text, request.voice))
            except TtsError as err:
                self._answer_error(request, str(err))
            except Exception:  # thread boundary: answer, log, keep serving
                _LOGGER.exception("tts/request %s failed", request.id)
                self._answer_error(request, "internal error")
            else:
                self._publish(f"tts/response/{request.id}", wav, 1)
                self.answered += 1

    def _answer_error(self, request: TtsRequest, why: str) -> None:
        self._publish(f"tts/response/{request.id}", TtsFailed(request.id, why).to_json(), 1)
