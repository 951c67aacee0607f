"""Learning a voice from Home Assistant: the ``enrol_speaker`` and ``cancel_enrolment``
actions send the golden ``enrol`` payloads, and the enrolment sensor follows the golden
``enrolment`` messages."""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest
from homeassistant.core import HomeAssistant, State
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import device_registry as dr
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_mqtt_message,
    mock_restore_cache,
)
from voluptuous import Invalid

from custom_components.pocket_satellite.const import (
    DOMAIN,
    SERVICE_CANCEL_ENROL,
    SERVICE_ENROL,
)

from .conftest import BASE, example, fire, published

SENSOR = "sensor.kitchen_voice_enrolment"


def _device_id(hass: HomeAssistant) -> str:
    device = dr.async_get(hass).async_get_device(identifiers={(DOMAIN, "kitchen")})
    assert device is not None
    return device.id


async def test_the_actions_send_the_enrol_requests(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    device = _device_id(hass)
    await hass.services.async_call(
        DOMAIN, SERVICE_ENROL, {"device_id": device, "speaker": "gran"}, blocking=True
    )
    await hass.services.async_call(
        DOMAIN,
        SERVICE_ENROL,
        {"device_id": device, "speaker": "gran", "prompts": 10},
        blocking=True,
    )
    await hass.services.async_call(
        DOMAIN, SERVICE_CANCEL_ENROL, {"device_id": device}, blocking=True
    )
    assert published(mqtt_mock, "enrol") == [example("enrol", i) for i in range(3)]


@pytest.mark.parametrize(
    "data", [{"speaker": "../gran"}, {"speaker": "gran", "prompts": 50}, {"speaker": ""}]
)
async def test_a_bad_speaker_or_count_is_refused_before_anything_is_sent(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock, data: dict[str, object]
) -> None:
    with pytest.raises(Invalid):
        await hass.services.async_call(
            DOMAIN, SERVICE_ENROL, {"device_id": _device_id(hass), **data}, blocking=True
        )
    assert published(mqtt_mock, "enrol") == []


async def test_an_unknown_device_is_refused(
    hass: HomeAssistant, setup_entry: MockConfigEntry, mqtt_mock: MagicMock
) -> None:
    with pytest.raises(ServiceValidationError):
        await hass.services.async_call(
            DOMAIN, SERVICE_ENROL, {"device_id": "nope", "speaker": "gran"}, blocking=True
        )
    assert published(mqtt_mock, "enrol") == []


async def test_the_enrolment_sensor_follows_the_satellite(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    state = hass.states.get(SENSOR)
    assert state is not None and state.state == "unknown"
    for index, expected in enumerate(("prompting", "done", "failed")):
        fire(hass, "enrolment", example("enrolment", index))
        await hass.async_block_till_done()
        state = hass.states.get(SENSOR)
        assert state is not None and state.state == expected
    assert state.attributes["kept"] == 3
    assert "at least 5" in state.attributes["error"]
    fire(hass, "enrolment", {"type": "enrolment", "state": "dancing"})  # malformed: ignored
    await hass.async_block_till_done()
    assert hass.states.get(SENSOR).state == "failed"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("stored", "restored"), [("done", "done"), ("cancelled", "cancelled"), ("prompting", "unknown")]
)
async def test_an_ended_enrolment_is_kept_over_a_restart(
    hass: HomeAssistant,
    mqtt_mock: MagicMock,
    config_entry: MockConfigEntry,
    stored: str,
    restored: str,
) -> None:
    """The satellite sends each step once: after a restart of Home Assistant the sensor
    shows the last ended enrolment, not unknown; one under way may have ended since."""
    attributes = {**example("enrolment", 1), "friendly_name": "Kitchen voice enrolment"}
    mock_restore_cache(hass, [State(SENSOR, stored, attributes)])
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    async_fire_mqtt_message(hass, f"{BASE}/status", "online", retain=True)
    await hass.async_block_till_done()
    state = hass.states.get(SENSOR)
    assert state is not None and state.state == restored
    if restored != "unknown":
        assert state.attributes["speaker"] == attributes["speaker"]
        assert state.attributes["kept"] == attributes["kept"]
    fire(hass, "enrolment", example("enrolment", 0))  # the satellite's next step wins
    await hass.async_block_till_done()
    assert hass.states.get(SENSOR).state == "prompting"  # type: ignore[union-attr]


async def test_a_stored_enrolment_of_another_shape_is_left_unknown(
    hass: HomeAssistant, mqtt_mock: MagicMock, config_entry: MockConfigEntry
) -> None:
    mock_restore_cache(hass, [State(SENSOR, "done", {"speaker": "gran"})])
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    async_fire_mqtt_message(hass, f"{BASE}/status", "online", retain=True)
    await hass.async_block_till_done()
    assert hass.states.get(SENSOR).state == "unknown"  # type: ignore[union-attr]
