"""Announce (say -> say/done) and TTS (tts/request -> WAV) through the satellite."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any
from unittest.mock import MagicMock, patch

import pytest
from aiohttp import web
from homeassistant.components import tts
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from .conftest import BASE, fire, golden, published

SATELLITE = "assist_satellite.kitchen"
TTS_ENTITY = "tts.kitchen_voice"
WAV = base64.b64decode(golden("tts_response")["examples"][0])


async def _wait_for_publish(mqtt_mock: MagicMock, path: str) -> dict[str, object]:
    for _ in range(100):
        found = published(mqtt_mock, path)
        if found:
            return dict(found[-1])
        await asyncio.sleep(0)
    raise AssertionError(f"nothing published on {path}")


def _shape(value: object) -> object:
    """Key names and value types, to compare with the golden examples."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    return type(value).__name__


async def _announce(hass: HomeAssistant, message: str, **options: object) -> None:
    await hass.services.async_call(
        "assist_satellite",
        "announce",
        {"entity_id": SATELLITE, "message": message, "preannounce": False, **options},
        blocking=True,
    )


async def test_announce_publishes_say_and_completes_on_done(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    task = hass.async_create_task(_announce(hass, "Dinner is ready"))
    request = await _wait_for_publish(mqtt_mock, "say")
    assert request["text"] == "Dinner is ready"
    assert _shape(request) == _shape(golden("say")["examples"][0])
    state = hass.states.get(SATELLITE)
    assert state is not None and state.state == "responding"
    assert not task.done()
    fire(hass, "say/done", {"id": "someone_else", "status": "done"})
    fire(hass, "say/done", {"id": request["id"], "status": "done"})
    await task
    state = hass.states.get(SATELLITE)
    assert state is not None and state.state == "idle"


async def test_announce_error_and_timeout(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    task = hass.async_create_task(_announce(hass, "Hello"))
    request = await _wait_for_publish(mqtt_mock, "say")
    fire(hass, "say/done", {"id": request["id"], "status": "error", "error": "no voice"})
    with pytest.raises(HomeAssistantError, match="no voice"):
        await task
    with patch("custom_components.pocket_satellite.assist_satellite.SAY_TIMEOUT_SECONDS", 0.01):
        await _announce(hass, "Nobody answers")  # returns after the timeout


@pytest.fixture
async def media_server(aiohttp_client: Any, socket_enabled: None) -> Any:
    """A real web server on 127.0.0.1 with a WAV, an MP3 and nothing else (the harness
    blocks sockets; this test opens them)."""

    async def chime(_request: web.Request) -> web.Response:
        return web.Response(body=base64.b64decode(golden("play")["examples"][0]))

    async def song(_request: web.Request) -> web.Response:
        return web.Response(body=b"ID3\x04\x00 not a wav")

    app = web.Application()
    app.router.add_get("/chime.wav", chime)
    app.router.add_get("/song.mp3", song)
    return await aiohttp_client(app)


async def test_media_alone_is_fetched_by_ha_and_played_on_the_satellite(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock, media_server: Any
) -> None:
    url = str(media_server.make_url("/chime.wav"))
    task = hass.async_create_task(
        hass.services.async_call(
            "assist_satellite",
            "announce",
            {"entity_id": SATELLITE, "media_id": url, "preannounce": False},
            blocking=True,
        )
    )
    for _ in range(200):
        plays = [c for c in mqtt_mock.async_publish.call_args_list if "/play/" in c.args[0]]
        if plays:
            break
        await asyncio.sleep(0.01)
    (play,) = plays
    assert play.args[1] == base64.b64decode(golden("play")["examples"][0])
    request_id = play.args[0].rsplit("/", 1)[-1]
    assert play.args[0] == f"{BASE}/play/{request_id}"
    fire(hass, "say/done", {"id": request_id, "status": "done"})
    await task
    assert published(mqtt_mock, "say") == []


@pytest.mark.parametrize(
    ("path", "why"),
    [("/song.mp3", "cannot be played .not a WAV file."), ("/missing.wav", "Could not fetch")],
)
async def test_media_the_satellite_cannot_play_is_refused(
    hass: HomeAssistant,
    setup_entry: MockConfigEntry,
    mqtt_mock: MagicMock,
    media_server: Any,
    path: str,
    why: str,
) -> None:
    with pytest.raises(HomeAssistantError, match=why):
        await hass.services.async_call(
            "assist_satellite",
            "announce",
            {"entity_id": SATELLITE, "media_id": str(media_server.make_url(path))},
            blocking=True,
        )
    assert not [c for c in mqtt_mock.async_publish.call_args_list if "/play/" in c.args[0]]


async def test_announcing_text_runs_no_tts_engine_in_home_assistant(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    """No TTS engine is set up here: core resolving the text to media would fail."""
    with patch(
        "homeassistant.components.tts.async_create_stream", wraps=tts.async_create_stream
    ) as create_stream:
        task = hass.async_create_task(_announce(hass, "Lunch", preannounce=True))
        request = await _wait_for_publish(mqtt_mock, "say")
        fire(hass, "say/done", {"id": request["id"], "status": "done"})
        await task
    create_stream.assert_not_called()
    assert published(mqtt_mock, "tts/request") == []  # nor our own voice entity
    assert request == {**golden("say")["examples"][2], "text": "Lunch", "id": request["id"]}


async def test_a_message_with_media_is_spoken_and_without_preannounce_no_chime(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    task = hass.async_create_task(
        _announce(hass, "Dinner", media_id="https://example.com/chime.mp3")
    )
    request = await _wait_for_publish(mqtt_mock, "say")
    fire(hass, "say/done", {"id": request["id"], "status": "done"})
    await task
    assert request == {"text": "Dinner", "id": request["id"]}


async def test_tts_returns_the_satellites_wav(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    entity = hass.data[tts.DATA_COMPONENT].get_entity(TTS_ENTITY)
    assert entity.supported_languages == ["en"]
    assert [v.voice_id for v in entity.async_get_supported_voices("en")] == ["en-us", "en-gb"]
    task = hass.async_create_task(
        entity.async_get_tts_audio("The kitchen light is on", "en", {"voice": "en-gb"})
    )
    request = await _wait_for_publish(mqtt_mock, "tts/request")
    assert request == {"id": request["id"], "text": "The kitchen light is on", "voice": "en-gb"}
    assert _shape(request) == _shape(golden("tts_request")["examples"][0])
    fire(hass, f"tts/response/{request['id']}", WAV)
    assert await task == ("wav", WAV)


async def test_tts_error_and_timeout(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    entity = hass.data[tts.DATA_COMPONENT].get_entity(TTS_ENTITY)
    task = hass.async_create_task(entity.async_get_tts_audio("Hi", "en", {}))
    request = await _wait_for_publish(mqtt_mock, "tts/request")
    assert "voice" not in request
    error = golden("tts_response")["error_examples"][0]
    fire(hass, f"tts/response/{request['id']}", json.dumps({**error, "id": request["id"]}))
    with pytest.raises(HomeAssistantError, match="unknown voice"):
        await task
    with (
        patch("custom_components.pocket_satellite.tts.TTS_TIMEOUT_SECONDS", 0.01),
        pytest.raises(HomeAssistantError, match="did not answer the TTS request"),
    ):
        await entity.async_get_tts_audio("Hi", "en", {})
    # A late or stray answer is ignored.
    fire(hass, f"{BASE}/tts/response/nobody", WAV)
    await hass.async_block_till_done()


async def test_pending_requests_end_with_the_entry(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    entity = hass.data[tts.DATA_COMPONENT].get_entity(TTS_ENTITY)
    task = hass.async_create_task(entity.async_get_tts_audio("Hi", "en", {}))
    await _wait_for_publish(mqtt_mock, "tts/request")
    assert await hass.config_entries.async_unload(setup_entry.entry_id)
    with pytest.raises(asyncio.CancelledError):
        await task
