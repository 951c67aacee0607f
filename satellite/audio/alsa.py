"""ALSA capture and playback through ``pyalsaaudio``, each in its own thread.

Capture reads 10 ms periods into a bounded queue; when the frame loop falls behind,
the oldest audio is dropped and counted. While the loop is idle it may take several
periods in one chunk (``cadenced``: up to the wake word model's next decision), so it
wakes up less often; a ``nudge`` (a command for the loop) hands over what is held at
the next period. Overruns (capture) and underruns (playback)
are recovered at once and counted in ``xruns``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import AudioDeviceError, MissingDependencyError
from ..queues import drain
from .chunk import FRAME_SAMPLES, PIPELINE_RATE_HZ, AudioChunk, join_frames

_LOGGER = logging.getLogger(__name__)
#: Periods in the ALSA ring buffer.
ALSA_PERIODS = 4
_STOP = object()


def _alsa() -> Any:
    try:
        import alsaaudio  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("pyalsaaudio", "alsa", "ALSA audio") from err
    return alsaaudio


def list_devices(capture: bool) -> list[str]:
    """Names of the ALSA PCMs that exist for capture or playback."""
    alsa = _alsa()
    return [str(n) for n in alsa.pcms(alsa.PCM_CAPTURE if capture else alsa.PCM_PLAYBACK)]


def open_pcm(
    device: str,
    capture: bool,
    rate_hz: int = PIPELINE_RATE_HZ,
    channels: int = 1,
    period_samples: int = FRAME_SAMPLES,
) -> Any:
    """Open an ALSA PCM as 16-bit little-endian; a missing device lists the ones there are."""
    alsa = _alsa()
    try:
        return alsa.PCM(
            type=alsa.PCM_CAPTURE if capture else alsa.PCM_PLAYBACK,
            mode=alsa.PCM_NORMAL,
            rate=rate_hz,
            channels=channels,
            format=alsa.PCM_FORMAT_S16_LE,
            periodsize=period_samples,
            periods=ALSA_PERIODS,
            device=device,
        )
    except alsa.ALSAAudioError as err:
        kind = "capture" if capture else "playback"
        known = ", ".join(list_devices(capture)) or "(none)"
        raise AudioDeviceError(
            f"Cannot open ALSA {kind} device {device!r}: {err}. Devices that exist: {known}. "
            f"Fix: pick one of them (see 'arecord -L' / 'aplay -L') in audio.input/output"
        ) from None


class AlsaCaptureSource:
    """Microphone capture in a thread; iterate to get 10 ms chunks in order."""

    def __init__(
        self,
        device: str = "default",
        queue_ms: int = 2000,
        max_seconds: float | None = None,
        pcm: Any = None,
    ) -> None:
        self.device = device
        self.xruns = 0
        self.dropped_chunks = 0
        self.max_seconds = max_seconds
        self._pcm = pcm if pcm is not None else open_pcm(device, capture=True)
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, queue_ms // 10))
        #: Periods handed to the frame loop in one chunk (1: each as it comes; the loop
        #: sets it between chunks, see ``cadenced``).
        self.periods_at_once = 1
        #: Set it to hand over the periods held at the next one (a command came in).
        self.nudge = threading.Event()
        self._held: list[AudioChunk] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="alsa-capture", daemon=True)
        self._thread.start()

    def cadenced(self, frames_per_wake: Callable[[], int]) -> Iterator[AudioChunk]:
        """The captured audio; after the loop is done with each chunk, ``frames_per_wake``
        (asked in the loop's thread) says how many periods the next one may hold."""
        for chunk in self:
            yield chunk
            self.periods_at_once = max(1, frames_per_wake())

    def _run(self) -> None:
        captured = 0
        limit = None if self.max_seconds is None else int(self.max_seconds * PIPELINE_RATE_HZ)
        try:
            while not self._stop.is_set() and (limit is None or captured < limit):
                length, data = self._pcm.read()
                if length < 0:
                    self.xruns += 1
                    _LOGGER.warning(
                        "ALSA capture overrun on %s (%d so far); recovered", self.device, self.xruns
                    )
                    continue
                if not length:
                    continue
                data = data[: length * 2]
                chunk = AudioChunk(PIPELINE_RATE_HZ, 2, 1, data, captured / PIPELINE_RATE_HZ)
                captured += length
                self._held.append(chunk)
                if len(self._held) >= self.periods_at_once or self.nudge.is_set():
                    self.nudge.clear()
                    self._hand_over()
        except Exception as err:
            _LOGGER.exception("ALSA capture on %s failed", self.device)
            self._hand_over()
            self._put(AudioDeviceError(f"ALSA capture on {self.device!r} failed: {err}"))
        finally:
            self._hand_over()
            self._put(_STOP)

    def _hand_over(self) -> None:
        """Queue the periods held, as one chunk."""
        held, self._held = self._held, []
        if held:
            self._put(held[0] if len(held) == 1 else join_frames(held))

    def _put(self, item: Any) -> None:
        while True:
            try:
                self._queue.put_nowait(item)
                return
            except queue.Full:
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    continue
                self.dropped_chunks += 1
                if self.dropped_chunks in (1, 10, 100) or self.dropped_chunks % 1000 == 0:
                    _LOGGER.warning(
                        "The frame loop is behind: dropped %d oldest capture chunk(s) from "
                        "%s. Raise audio.queue_ms or lower the CPU load",
                        self.dropped_chunks,
                        self.device,
                    )

    def __iter__(self) -> Iterator[AudioChunk]:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, Exception):
                raise item
            yield item

    def close(self) -> None:
        """Stop capturing and release the device."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        self._pcm.close()


class AlsaPlaybackSink:
    """Speaker output in a thread, fed through a bounded queue of chunks."""

    def __init__(
        self,
        device: str = "default",
        rate_hz: int = PIPELINE_RATE_HZ,
        channels: int = 1,
        queue_ms: int = 2000,
        pcm: Any = None,
    ) -> None:
        self.device = device
        self.rate_hz = rate_hz
        self.channels = channels
        self.xruns = 0
        self._pcm = (
            pcm
            if pcm is not None
            else open_pcm(device, capture=False, rate_hz=rate_hz, channels=channels)
        )
        self._period_bytes = FRAME_SAMPLES * rate_hz // PIPELINE_RATE_HZ * 2 * channels
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, queue_ms // 10))
        self._error: Exception | None = None
        self._thread = threading.Thread(target=self._run, name="alsa-playback", daemon=True)
        self._thread.start()

    def write(self, chunk: AudioChunk) -> None:
        """Queue a chunk for playback (blocks while the queue is full)."""
        if self._error is not None:
            raise AudioDeviceError(f"ALSA playback on {self.device!r} failed: {self._error}")
        if (chunk.rate_hz, chunk.width_bytes, chunk.channels) != (self.rate_hz, 2, self.channels):
            raise AudioDeviceError(
                f"Playback device {self.device!r} is open at {self.rate_hz} Hz 16-bit "
                f"{self.channels} channel(s); got {chunk.rate_hz} Hz "
                f"{8 * chunk.width_bytes}-bit {chunk.channels} channel(s)"
            )
        data = chunk.samples
        for offset in range(0, len(data), self._period_bytes):
            self._queue.put(data[offset : offset + self._period_bytes])

    def _run(self) -> None:
        try:
            while True:
                data = self._queue.get()
                if data is _STOP:
                    return
                written = self._pcm.write(data)
                if written is not None and written < 0:
                    self.xruns += 1
                    _LOGGER.warning(
                        "ALSA playback underrun on %s (%d so far); recovered",
                        self.device,
                        self.xruns,
                    )
                    self._pcm.write(data)
        except Exception as err:
            _LOGGER.exception("ALSA playback on %s failed", self.device)
            self._error = err

    def flush(self) -> int:
        """Drop the audio queued for the device; return its size in bytes.

        What ALSA already holds (its ring buffer, ``ALSA_PERIODS`` periods) still plays.
        """
        items = drain(self._queue)
        dropped = sum(len(item) for item in items if item is not _STOP)
        if any(item is _STOP for item in items):
            self._queue.put(_STOP)
        return dropped

    def close(self) -> None:
        """Play what is queued, then release the device."""
        self._queue.put(_STOP)
        self._thread.join(timeout=30.0)
        self._pcm.close()
