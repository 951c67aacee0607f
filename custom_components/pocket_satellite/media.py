"""Announcements of media: Home Assistant fetches the audio and sends it to the satellite.

The satellite plays WAV from ``play/<id>`` (16-bit mono PCM); it needs no route to
Home Assistant's web server and no credentials for it. Core has already resolved the
announcement's media to a URL (a media source, a signed HA path, or any http URL).
"""

from __future__ import annotations

import asyncio
import io
import wave
from typing import Final

import aiohttp
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.aiohttp_client import async_get_clientsession

from .const import DOMAIN

#: Largest media fetched, bytes (the satellite's own limit on ``play``).
MAX_MEDIA_BYTES: Final = 4 * 1024 * 1024
#: How long fetching the media may take, s.
MEDIA_TIMEOUT_SECONDS: Final = 15.0


async def async_fetch_wav(hass: HomeAssistant, url: str) -> bytes:
    """The WAV at ``url``, checked as the satellite will; HomeAssistantError says why not."""
    try:
        async with asyncio.timeout(MEDIA_TIMEOUT_SECONDS):
            response = await async_get_clientsession(hass).get(url)
            response.raise_for_status()
            data = await response.content.read(MAX_MEDIA_BYTES + 1)
    except (aiohttp.ClientError, TimeoutError) as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="media_fetch_failed",
            translation_placeholders={"url": url, "error": str(err) or type(err).__name__},
        ) from err
    if len(data) > MAX_MEDIA_BYTES:
        raise _not_playable(url, f"over {MAX_MEDIA_BYTES // (1024 * 1024)} MiB")
    try:
        with wave.open(io.BytesIO(data)) as reader:
            form = (reader.getsampwidth(), reader.getnchannels(), reader.getframerate())
    except (wave.Error, EOFError):
        raise _not_playable(url, "not a WAV file") from None
    if form[:2] != (2, 1) or not 8000 <= form[2] <= 48000:
        raise _not_playable(url, f"{8 * form[0]}-bit, {form[1]} channel(s) at {form[2]} Hz")
    return data


def _not_playable(url: str, why: str) -> HomeAssistantError:
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key="media_not_playable",
        translation_placeholders={"url": url, "why": why},
    )
