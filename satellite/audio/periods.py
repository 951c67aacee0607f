"""The player's producer side: a reply's chunks as whole periods at the player's rate.

Chunks of any format are converted to 16-bit mono at ``rate_hz`` (resampled with soxr
when their rate differs) and cut into ``period_bytes`` pieces; what does not fill a
period waits for the next chunk, or is given out as the reply's tail.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AudioDeviceError
from .chunk import AudioChunk, float_to_int16, to_float_mono


class PeriodCutter:
    """Converts one reply at a time into periods; used by the producer's thread only."""

    def __init__(self, rate_hz: int, period_bytes: int) -> None:
        self.rate_hz = rate_hz
        self.period_bytes = period_bytes
        self._resampler: Any = None
        self._resampler_rate = 0
        self._pending = b""

    def reset(self) -> None:
        """Forget the previous reply: no resampler, nothing pending."""
        self._resampler = None
        self._pending = b""

    def periods(self, chunk: AudioChunk) -> list[bytes]:
        """The whole periods that ``chunk`` completes; the rest waits for the next chunk.

        Raises AudioDeviceError when a resampled reply changes its sample rate.
        """
        data = self._pending + self._convert(chunk, last=False)
        whole = len(data) - len(data) % self.period_bytes
        self._pending = data[whole:]
        return [
            data[offset : offset + self.period_bytes]
            for offset in range(0, whole, self.period_bytes)
        ]

    def tail(self) -> bytes:
        """What is left of the reply (less than a period, plus the resampler's flush)."""
        tail = self._pending + (self._convert(None, last=True) if self._resampler else b"")
        self.reset()
        return tail

    def _convert(self, chunk: AudioChunk | None, last: bool) -> bytes:
        if (
            chunk is not None
            and chunk.rate_hz == self.rate_hz
            and chunk.width_bytes == 2
            and chunk.channels == 1
            and self._resampler is None
        ):
            return chunk.samples
        if chunk is not None and self._resampler is None and chunk.rate_hz != self.rate_hz:
            import soxr  # noqa: PLC0415

            self._resampler = soxr.ResampleStream(chunk.rate_hz, self.rate_hz, 1, dtype="float32")
            self._resampler_rate = chunk.rate_hz
        audio = to_float_mono(chunk) if chunk is not None else np.zeros(0, np.float32)
        if self._resampler is not None:
            if chunk is not None and chunk.rate_hz != self._resampler_rate:
                raise AudioDeviceError(
                    f"A reply changed sample rate from {self._resampler_rate} to {chunk.rate_hz} Hz"
                )
            audio = self._resampler.resample_chunk(audio, last=last)
        return float_to_int16(audio).tobytes()
