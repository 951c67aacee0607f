"""WAV file source and sink."""

from __future__ import annotations

import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import AudioFormatError
from .chunk import PIPELINE_RATE_HZ, AudioChunk, float_to_int16, to_float_mono

#: Chunk size the WAV source yields, s.
READ_SECONDS = 0.1


class WavFileSource:
    """Reads a PCM WAV file and yields 16 kHz mono 16-bit chunks (converted as needed)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise AudioFormatError(f"{self.path}: no such WAV file. Fix: pass an existing file")
        try:
            with wave.open(str(self.path), "rb") as wav:
                self.rate_hz = wav.getframerate()
                self.width_bytes = wav.getsampwidth()
                self.channels = wav.getnchannels()
        except (wave.Error, EOFError) as err:
            raise AudioFormatError(
                f"{self.path}: not a PCM WAV file ({err}). Fix: convert it, e.g. "
                f"'sox IN -r 16000 -c 1 -b 16 OUT.wav'"
            ) from None
        if self.width_bytes not in (1, 2, 4):
            raise AudioFormatError(
                f"{self.path}: {8 * self.width_bytes}-bit samples are not supported. Fix: "
                f"convert to 16-bit, e.g. 'sox IN -b 16 OUT.wav'"
            )

    def __iter__(self) -> Iterator[AudioChunk]:
        resampler: Any = None
        if self.rate_hz != PIPELINE_RATE_HZ:
            import soxr  # noqa: PLC0415

            resampler = soxr.ResampleStream(self.rate_hz, PIPELINE_RATE_HZ, 1, dtype="float32")
        emitted = 0
        with wave.open(str(self.path), "rb") as wav:
            block = max(1, int(self.rate_hz * READ_SECONDS))
            while True:
                raw = wav.readframes(block)
                last = len(raw) < block * self.width_bytes * self.channels
                raw = raw[: len(raw) - len(raw) % (self.width_bytes * self.channels)]
                chunk = AudioChunk(self.rate_hz, self.width_bytes, self.channels, raw)
                audio = to_float_mono(chunk)
                if resampler is not None:
                    audio = resampler.resample_chunk(audio, last=last)
                if len(audio):
                    yield AudioChunk.from_int16(
                        float_to_int16(audio), timestamp_seconds=emitted / PIPELINE_RATE_HZ
                    )
                    emitted += len(audio)
                if last:
                    return

    def close(self) -> None:
        """Nothing held open between iterations."""


def read_wav(path: str | Path) -> AudioChunk:
    """Read a whole WAV file as one 16 kHz mono chunk."""
    parts = list(WavFileSource(path))
    if not parts:
        return AudioChunk(PIPELINE_RATE_HZ, 2, 1, b"")
    return AudioChunk(PIPELINE_RATE_HZ, 2, 1, b"".join(p.samples for p in parts))


class WavFileSink:
    """Writes chunks to a WAV file in the format of the first chunk."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._wav: wave.Wave_write | None = None
        self._format: tuple[int, int, int] | None = None

    def write(self, chunk: AudioChunk) -> None:
        """Append a chunk (all chunks must share one format)."""
        fmt = (chunk.rate_hz, chunk.width_bytes, chunk.channels)
        if self._wav is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._wav = wave.open(str(self.path), "wb")  # noqa: SIM115 - kept open
            self._wav.setframerate(chunk.rate_hz)
            self._wav.setsampwidth(chunk.width_bytes)
            self._wav.setnchannels(chunk.channels)
            self._format = fmt
        elif fmt != self._format:
            raise AudioFormatError(
                f"Cannot mix formats in one WAV file: {fmt} after {self._format}"
            )
        self._wav.writeframes(chunk.samples)

    def close(self) -> None:
        """Finish the file."""
        if self._wav is not None:
            self._wav.close()
            self._wav = None


def write_wav(path: str | Path, audio: AudioChunk) -> None:
    """Write one chunk as a WAV file."""
    sink = WavFileSink(path)
    try:
        sink.write(audio)
    finally:
        sink.close()
