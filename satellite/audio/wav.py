"""WAV file source and sink."""

from __future__ import annotations

import stat
import struct
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import AudioFormatError
from .chunk import PIPELINE_RATE_HZ, AudioChunk, float_to_int16, to_float_mono

#: Chunk size the WAV source yields, s.
READ_SECONDS = 0.1
#: Sample rates a WAV header may give, Hz: outside, the header is broken.
MIN_RATE_HZ = 4000
MAX_RATE_HZ = 384_000
#: Most channels a WAV header may give.
MAX_CHANNELS = 32


#: What the ``wave`` module raises on a broken file (a chunk size past the end raises
#: RuntimeError from its seek, a short field struct.error).
_BROKEN = (wave.Error, EOFError, RuntimeError, struct.error, ValueError)


def _not_wav(path: Path, err: Exception) -> AudioFormatError:
    why = str(err) or "it ends inside the header, or a chunk size is wrong"
    return AudioFormatError(
        f"{path}: not a PCM WAV file ({why}). Fix: convert it, e.g. "
        "'sox IN -r 16000 -c 1 -b 16 OUT.wav'"
    )


def _check_is_file(path: Path) -> None:
    """Raise AudioFormatError saying what ``path`` is when it is no regular file."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise AudioFormatError(f"{path}: no such WAV file. Fix: pass an existing file") from None
    except OSError as err:
        raise AudioFormatError(
            f"{path}: cannot look at it ({err.strerror}). Fix: pass a readable WAV file"
        ) from None
    if stat.S_ISREG(mode):
        return
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISFIFO: "a pipe",
        stat.S_ISSOCK: "a socket",
    }
    kind = next((name for test, name in kinds.items() if test(mode)), "not a regular file")
    raise AudioFormatError(
        f"{path}: is {kind}, not a WAV file. Fix: pass a WAV file, or '-' for raw 16 kHz "
        "mono S16LE audio on stdin"
    )


class WavFileSource:
    """Reads a PCM WAV file and yields 16 kHz mono 16-bit chunks (converted as needed)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        _check_is_file(self.path)
        try:
            with wave.open(str(self.path), "rb") as wav:
                self.rate_hz = wav.getframerate()
                self.width_bytes = wav.getsampwidth()
                self.channels = wav.getnchannels()
        except _BROKEN as err:
            raise _not_wav(self.path, err) from None
        except OSError as err:
            raise AudioFormatError(
                f"{self.path}: cannot read it ({err.strerror}). Fix: check its permissions"
            ) from None
        if self.width_bytes not in (1, 2, 4):
            raise AudioFormatError(
                f"{self.path}: {8 * self.width_bytes}-bit samples are not supported. Fix: "
                f"convert to 16-bit, e.g. 'sox IN -b 16 OUT.wav'"
            )
        if not MIN_RATE_HZ <= self.rate_hz <= MAX_RATE_HZ:
            raise AudioFormatError(
                f"{self.path}: its header gives a sample rate of {self.rate_hz} Hz, outside "
                f"{MIN_RATE_HZ}-{MAX_RATE_HZ} Hz (a broken header?). Fix: convert it, e.g. "
                "'sox IN -r 16000 -c 1 -b 16 OUT.wav'"
            )
        if not 1 <= self.channels <= MAX_CHANNELS:
            raise AudioFormatError(
                f"{self.path}: its header gives {self.channels} channels, outside 1-"
                f"{MAX_CHANNELS}. Fix: convert it to mono, e.g. 'sox IN -c 1 OUT.wav'"
            )

    def __iter__(self) -> Iterator[AudioChunk]:
        resampler: Any = None
        if self.rate_hz != PIPELINE_RATE_HZ:
            import soxr  # noqa: PLC0415

            resampler = soxr.ResampleStream(self.rate_hz, PIPELINE_RATE_HZ, 1, dtype="float32")
        try:
            yield from self._read(resampler)
        except _BROKEN as err:  # the header passed, the data does not
            raise _not_wav(self.path, err) from None

    def _read(self, resampler: Any) -> Iterator[AudioChunk]:
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
        """Opens the file now, so that a path it cannot write is an error before any
        work (AudioFormatError saying why), not a traceback in the player's thread."""
        self.path = Path(path)
        self._wav: wave.Wave_write | None = None
        self._format: tuple[int, int, int] | None = None
        if self.path.is_dir():
            raise AudioFormatError(
                f"{self.path}: is a directory. Fix: give a file name, e.g. {self.path / 'out.wav'}"
            )
        parent = self.path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            why = "a file is in the way" if isinstance(err, FileExistsError) else err.strerror
            raise AudioFormatError(
                f"{self.path}: cannot make its folder {parent} ({why}). Fix: choose a path "
                "in a folder you can write to"
            ) from None
        try:
            self._file: BinaryIO | None = self.path.open("wb")
        except OSError as err:
            raise AudioFormatError(
                f"{self.path}: cannot write it ({err.strerror}). Fix: choose a path in a "
                "folder you can write to"
            ) from None

    def write(self, chunk: AudioChunk) -> None:
        """Append a chunk (all chunks must share one format)."""
        fmt = (chunk.rate_hz, chunk.width_bytes, chunk.channels)
        if self._file is None:
            raise AudioFormatError(f"{self.path}: written after close()")
        if self._wav is None:
            self._wav = wave.open(self._file, "wb")  # noqa: SIM115 - kept open
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
        """Finish the file; with nothing written there is no file (as before the open)."""
        if self._file is None:
            return
        if self._wav is not None:
            self._wav.close()
            self._wav = None
        self._file.close()
        self._file = None
        if self._format is None:
            self.path.unlink(missing_ok=True)


def write_wav(path: str | Path, audio: AudioChunk) -> None:
    """Write one chunk as a WAV file."""
    sink = WavFileSink(path)
    try:
        sink.write(audio)
    finally:
        sink.close()
