"""Config flow: MQTT discovery of ``pocket_satellite/+/info``, manual id, reconfigure."""

from __future__ import annotations

import asyncio
from typing import Any

import voluptuous as vol
from homeassistant.components import mqtt
from homeassistant.config_entries import ConfigFlow, ConfigFlowResult
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.service_info.mqtt import MqttServiceInfo

from .const import (
    BASE_TOPIC_PATTERN,
    CONF_BASE_TOPIC,
    CONF_INFO,
    CONF_SATELLITE_ID,
    DEFAULT_BASE_TOPIC,
    DOMAIN,
    INFO_TIMEOUT_SECONDS,
    SATELLITE_ID_PATTERN,
)
from .messages import MessageError, SatelliteInfo, load_json


async def async_fetch_info(
    hass: HomeAssistant, base_topic: str, satellite_id: str, timeout: float
) -> SatelliteInfo | None:
    """The satellite's retained ``info``, or None when none arrives in time."""
    found: asyncio.Future[SatelliteInfo] = hass.loop.create_future()

    @callback
    def on_info(msg: mqtt.ReceiveMessage) -> None:
        try:
            info = SatelliteInfo.parse(load_json(msg.payload))
        except MessageError:
            return
        if info.id == satellite_id and not found.done():
            found.set_result(info)

    unsubscribe = await mqtt.async_subscribe(
        hass, f"{base_topic}/{satellite_id}/info", on_info, qos=1
    )
    try:
        async with asyncio.timeout(timeout):
            return await found
    except TimeoutError:
        return None
    finally:
        unsubscribe()


def base_topic_of(topic: str, satellite_id: str) -> str | None:
    """The base topic of ``<base>/<satellite_id>/info``; None for any other topic."""
    suffix = f"/{satellite_id}/info"
    if not topic.endswith(suffix):
        return None
    base = topic.removesuffix(suffix)
    return base if BASE_TOPIC_PATTERN.fullmatch(base) else None


def _schema(satellite_id: str = "", base_topic: str = DEFAULT_BASE_TOPIC) -> vol.Schema:
    return vol.Schema(
        {
            vol.Required(CONF_SATELLITE_ID, default=satellite_id): str,
            vol.Required(CONF_BASE_TOPIC, default=base_topic): str,
        }
    )


class PocketSatelliteConfigFlow(ConfigFlow, domain=DOMAIN):
    """Add a Pocket Satellite."""

    VERSION = 1

    def __init__(self) -> None:
        """Start with nothing discovered."""
        self._discovered: SatelliteInfo | None = None
        self._discovered_base = DEFAULT_BASE_TOPIC

    async def async_step_mqtt(self, discovery_info: MqttServiceInfo) -> ConfigFlowResult:
        """A satellite announced itself on ``<base topic>/<id>/info`` (any base topic of
        one or two levels, see manifest.json)."""
        try:
            info = SatelliteInfo.parse(load_json(discovery_info.payload))
        except MessageError:
            return self.async_abort(reason="invalid_discovery_info")
        base_topic = base_topic_of(discovery_info.topic, info.id)
        if base_topic is None:
            return self.async_abort(reason="invalid_discovery_info")
        await self.async_set_unique_id(info.id)
        # A satellite already added: keep its stored info (and base topic) current; the
        # entry reloads when they changed.
        self._abort_if_unique_id_configured(
            updates={CONF_INFO: info.as_dict(), CONF_BASE_TOPIC: base_topic}
        )
        self._discovered = info
        self._discovered_base = base_topic
        self.context["title_placeholders"] = {"name": info.name}
        return await self.async_step_discovery_confirm()

    async def async_step_discovery_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask before adding a discovered satellite."""
        info = self._discovered
        assert info is not None
        if user_input is not None:
            return self._create(info, self._discovered_base)
        return self.async_show_form(
            step_id="discovery_confirm",
            description_placeholders={"name": info.name, "id": info.id},
        )

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Add a satellite by its id."""
        if not await mqtt.async_wait_for_mqtt_client(self.hass):
            return self.async_abort(reason="mqtt_not_connected")
        errors: dict[str, str] = {}
        if user_input is not None:
            satellite_id, base_topic, errors = self._validate(user_input)
            if not errors:
                await self.async_set_unique_id(satellite_id)
                self._abort_if_unique_id_configured()
                info = await async_fetch_info(
                    self.hass, base_topic, satellite_id, INFO_TIMEOUT_SECONDS
                )
                if info is None:
                    errors["base"] = "cannot_connect"
                else:
                    return self._create(info, base_topic)
        defaults = user_input or {}
        return self.async_show_form(
            step_id="user",
            data_schema=_schema(
                defaults.get(CONF_SATELLITE_ID, ""),
                defaults.get(CONF_BASE_TOPIC, DEFAULT_BASE_TOPIC),
            ),
            errors=errors,
        )

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Point the entry at another base topic (the same satellite id)."""
        entry = self._get_reconfigure_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            satellite_id, base_topic, errors = self._validate(user_input)
            if not errors:
                await self.async_set_unique_id(satellite_id)
                self._abort_if_unique_id_mismatch(reason="wrong_satellite")
                info = await async_fetch_info(
                    self.hass, base_topic, satellite_id, INFO_TIMEOUT_SECONDS
                )
                if info is None:
                    errors["base"] = "cannot_connect"
                else:
                    return self.async_update_reload_and_abort(
                        entry,
                        data_updates={CONF_BASE_TOPIC: base_topic, CONF_INFO: info.as_dict()},
                    )
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=_schema(
                entry.data[CONF_SATELLITE_ID],
                entry.data.get(CONF_BASE_TOPIC, DEFAULT_BASE_TOPIC),
            ),
            errors=errors,
        )

    @staticmethod
    def _validate(user_input: dict[str, Any]) -> tuple[str, str, dict[str, str]]:
        satellite_id = str(user_input[CONF_SATELLITE_ID]).strip()
        base_topic = str(user_input[CONF_BASE_TOPIC]).strip().strip("/")
        errors: dict[str, str] = {}
        if not SATELLITE_ID_PATTERN.fullmatch(satellite_id):
            errors[CONF_SATELLITE_ID] = "invalid_satellite_id"
        if not BASE_TOPIC_PATTERN.fullmatch(base_topic):
            errors[CONF_BASE_TOPIC] = "invalid_base_topic"
        return satellite_id, base_topic, errors

    def _create(self, info: SatelliteInfo, base_topic: str) -> ConfigFlowResult:
        return self.async_create_entry(
            title=info.name,
            data={
                CONF_SATELLITE_ID: info.id,
                CONF_BASE_TOPIC: base_topic,
                CONF_INFO: info.as_dict(),
            },
        )
