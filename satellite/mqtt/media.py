"""``play/<id>``: a WAV Home Assistant sends to be played (an announcement of media).

Home Assistant fetches the media itself and sends the bytes over the broker, so the
satellite needs no route to Home Assistant's web server and no credentials for it.
Only 16-bit mono PCM WAV is taken (the player resamples any rate); anything else is
rejected with what to do, and ``say/done`` reports the error to Home Assistant.
"""

from __future__ import annotations

import io
import wave

from ..audio.chunk import AudioChunk
from .payloads import PayloadError, PlayRequest, check_request_id

#: The topic prefix under the satellite's base: ``play/<id>``.
PLAY = "play"
#: Largest WAV accepted, bytes (about 2 minutes of 16 kHz mono).
MAX_PLAY_BYTES = 4 * 1024 * 1024


def decode_play(request_id: str, payload: bytes, max_bytes: int = MAX_PLAY_BYTES) -> PlayRequest:
    """A PlayRequest from a ``play/<id>`` message; PayloadError says what is wrong."""
    check_request_id("play id", request_id)
    if len(payload) > max_bytes:
        raise PayloadError(f"play: {len(payload)} bytes is over {max_bytes}; send shorter audio")
    if payload[:4] != b"RIFF" or payload[8:12] != b"WAVE":
        raise PayloadError("play: not a WAV file. Fix: send 16-bit mono PCM WAV")
    try:
        with wave.open(io.BytesIO(payload)) as reader:
            width, channels, rate = (
                reader.getsampwidth(),
                reader.getnchannels(),
                reader.getframerate(),
            )
            frames = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as err:
        raise PayloadError(f"play: unreadable WAV ({err}). Fix: send 16-bit mono PCM WAV") from None
    if (width, channels) != (2, 1) or not 8000 <= rate <= 48000:
        raise PayloadError(
            f"play: {8 * width}-bit, {channels} channel(s) at {rate} Hz. Fix: send 16-bit "
            "mono PCM WAV at 8-48 kHz"
        )
    if not frames:
        raise PayloadError("play: the WAV holds no audio")
    return PlayRequest(request_id, AudioChunk(rate, 2, 1, frames))
