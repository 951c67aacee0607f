"""Intents from the satellite run through HA's own intent machinery; slots go back.

Every ``intent`` fires a ``pocket_satellite_intent`` bus event. One that names an intent
HA knows (``HassTurnOn``, ...) is handled with ``intent.async_handle``, limited to the
entities exposed to Assist, with the satellite's device (so "turn on the lights" means
its area, and timers end on it), its language and a context; the speech is published
back on ``response``. The names and areas of exposed entities are published retained on
``slots`` for the grammar.
"""

from __future__ import annotations

import logging
from typing import Any

from homeassistant.components.homeassistant.exposed_entities import async_should_expose
from homeassistant.core import CALLBACK_TYPE, Context, Event, HomeAssistant, callback
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import intent
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.start import async_at_started

from .const import DOMAIN, EVENT_INTENT, SLOTS_COOLDOWN_SECONDS
from .device import PocketSatellite
from .messages import IntentMessage
from .replies import phrase

_LOGGER = logging.getLogger(__name__)
ASSISTANT = "conversation"


class IntentBridge:
    """Handles the satellite's intents in Home Assistant."""

    def __init__(self, hass: HomeAssistant, satellite: PocketSatellite) -> None:
        self.hass = hass
        self.satellite = satellite
        self.handled = 0

    async def async_handle(self, message: IntentMessage) -> None:
        """Fire the bus event, then run the intent when HA knows it."""
        self.hass.bus.async_fire(
            EVENT_INTENT,
            {
                "satellite_id": self.satellite.satellite_id,
                "intent": message.intent,
                "slots": message.slots,
                "confidence": message.confidence,
                "source": message.source,
                "utterance_id": message.utterance_id,
                "id": message.id,
            },
        )
        if message.intent is None:  # not understood: nothing for HA to do
            return
        language = self.satellite.info.language
        device = dr.async_get(self.hass).async_get_device(
            identifiers={(DOMAIN, self.satellite.satellite_id)}
        )
        slots = with_area(
            {name: {"value": value} for name, value in message.slots.items()},
            None if device is None else self._area(device.area_id),
        )
        if slots is None:
            _LOGGER.info(
                "%s from %s names no device and no area, and the satellite's device has no "
                "area in Home Assistant: nothing done (set the device's area)",
                message.intent,
                self.satellite.satellite_id,
            )
            await self.satellite.async_respond(message.utterance_id, phrase(language, "sorry"))
            return
        try:
            response = await intent.async_handle(
                self.hass,
                DOMAIN,
                message.intent,
                slots=slots,
                context=Context(),
                language=language,
                assistant=ASSISTANT,
                # Timers set through it end on it (see assist_satellite.py).
                device_id=None if device is None else device.id,
            )
        except intent.UnknownIntent:
            _LOGGER.debug("%s is not an HA intent; left to automations", message.intent)
            return
        except intent.IntentError as err:
            _LOGGER.info(
                "Intent %s from %s failed: %s", message.intent, self.satellite.satellite_id, err
            )
            await self.satellite.async_respond(message.utterance_id, phrase(language, "sorry"))
            return
        self.handled += 1
        await self.satellite.async_respond(message.utterance_id, speech(response, language))

    def _area(self, area_id: str | None) -> ar.AreaEntry | None:
        return None if area_id is None else ar.async_get(self.hass).async_get_area(area_id)


def with_area(slots: dict[str, Any], area: ar.AreaEntry | None) -> dict[str, Any] | None:
    """The satellite's area in ``slots``, as HA's own agent puts a device's area.

    It is preferred among equal matches; and a request that names only a kind of device
    ("turn on the lights") means that kind in the satellite's area. Such a request from a
    satellite without an area is None: it would otherwise reach every such device in the
    house.
    """
    targeted = any(key in slots for key in ("name", "area", "floor"))
    kind_only = not targeted and any(key in slots for key in ("domain", "device_class"))
    if area is None:
        return None if kind_only else slots
    slots = {**slots, "preferred_area_id": {"value": area.id}}
    if kind_only:
        slots["area"] = {"value": area.name}
    return slots


def speech(response: intent.IntentResponse, language: str) -> str:
    """What to say for ``response``: its own speech, else a phrase in ``language``."""
    plain = response.speech.get("plain", {}).get("speech")
    if plain:
        return str(plain)
    if response.response_type is intent.IntentResponseType.ERROR:
        return phrase(language, "sorry")
    names = [target.name for target in response.success_results]
    if names:
        return phrase(language, "done_names", names=", ".join(names))
    return phrase(language, "done")


class SlotsPublisher:
    """Publishes the exposed entity names and areas whenever they may have changed."""

    def __init__(self, hass: HomeAssistant, satellite: PocketSatellite) -> None:
        self.hass = hass
        self.satellite = satellite
        self.published: tuple[list[str], list[str]] | None = None
        self._debouncer = Debouncer(
            hass,
            _LOGGER,
            cooldown=SLOTS_COOLDOWN_SECONDS,
            immediate=False,
            function=self.async_publish,
        )

    @callback
    def async_start(self) -> CALLBACK_TYPE:
        """Publish now and on registry changes; returns the stopper."""
        removers = [
            self.hass.bus.async_listen(er.EVENT_ENTITY_REGISTRY_UPDATED, self._schedule),
            self.hass.bus.async_listen(ar.EVENT_AREA_REGISTRY_UPDATED, self._schedule),
            # Once HA has started every integration's entities exist (at once when it has).
            async_at_started(self.hass, self._started),
        ]

        @callback
        def stop() -> None:
            for remove in removers:
                remove()
            self._debouncer.async_shutdown()

        return stop

    @callback
    def _schedule(self, event: Event[Any]) -> None:
        self._debouncer.async_schedule_call()

    async def _started(self, hass: HomeAssistant) -> None:
        await self.async_publish()

    def collect(self) -> tuple[list[str], list[str]]:
        """Names of exposed entities and every area name, sorted."""
        names = {
            state.name
            for state in self.hass.states.async_all()
            if async_should_expose(self.hass, ASSISTANT, state.entity_id)
        }
        areas = {area.name for area in ar.async_get(self.hass).async_list_areas()}
        return sorted(names), sorted(areas)

    async def async_publish(self) -> None:
        """Publish when the lists changed since the last time."""
        current = self.collect()
        if current == self.published:
            return
        self.published = current
        await self.satellite.async_publish_slots(*current)
