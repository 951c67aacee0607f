"""Open sources and sinks from a spec string: ``alsa:DEVICE``, a WAV path, ``-``, ``null``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Protocol

from ..errors import AudioFormatError
from .chunk import AudioChunk


class AudioSource(Protocol):
    """Something that yields audio chunks and can be closed."""

    def __iter__(self) -> Iterator[AudioChunk]:
        """Chunks in order until the input ends."""

    def close(self) -> None:
        """Release the input."""


class AudioSink(Protocol):
    """Something that accepts audio chunks and can be closed."""

    def write(self, chunk: AudioChunk) -> None:
        """Output a chunk."""

    def close(self) -> None:
        """Finish output and release it."""


class NullSink:
    """Discards audio, counting it."""

    def __init__(self) -> None:
        self.seconds_written = 0.0

    def write(self, chunk: AudioChunk) -> None:
        self.seconds_written += chunk.seconds

    def close(self) -> None:
        """Nothing to release."""


def open_source(spec: str, queue_ms: int = 2000, max_seconds: float | None = None) -> AudioSource:
    """``alsa:DEVICE`` (microphone), ``-`` (raw 16 kHz mono S16LE on stdin) or a WAV path."""
    if not spec.strip():
        raise AudioFormatError(
            "The audio input is empty. Fix: give FILE.wav, alsa:DEVICE or - (raw audio on stdin)"
        )
    if spec.startswith("alsa:"):
        from .alsa import AlsaCaptureSource  # noqa: PLC0415

        return AlsaCaptureSource(spec[5:] or "default", queue_ms=queue_ms, max_seconds=max_seconds)
    if spec == "-":
        from .raw import RawStreamSource  # noqa: PLC0415

        return RawStreamSource(sys.stdin.buffer)
    from .wav import WavFileSource  # noqa: PLC0415

    return WavFileSource(spec)


def open_sink(spec: str, rate_hz: int = 16000, queue_ms: int = 2000) -> AudioSink:
    """``alsa:DEVICE`` (speaker), ``null`` or a WAV path."""
    if spec.startswith("alsa:"):
        from .alsa import AlsaPlaybackSink  # noqa: PLC0415

        return AlsaPlaybackSink(spec[5:] or "default", rate_hz=rate_hz, queue_ms=queue_ms)
    if spec == "null":
        return NullSink()
    from .wav import WavFileSink  # noqa: PLC0415

    return WavFileSink(spec)
