"""Intents from the satellite run through HA's own intent machinery; slots go back.

Every ``intent`` fires a ``pocket_satellite_intent`` bus event. One that names an intent
HA knows (``HassTurnOn``, ...) is handled with ``intent.async_handle``, limited to the
entities exposed to Assist, and the speech is published back on ``response``. The names
and areas of exposed entities are published retained on ``slots`` for the grammar.
"""

from __future__ import annotations

import logging
from typing import Any

from homeassistant.components.homeassistant.exposed_entities import async_should_expose
from homeassistant.core import CALLBACK_TYPE, Event, HomeAssistant, callback
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import intent
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.start import async_at_started

from .const import DOMAIN, EVENT_INTENT, SLOTS_COOLDOWN_SECONDS
from .device import PocketSatellite
from .messages import IntentMessage

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
        try:
            response = await intent.async_handle(
                self.hass,
                DOMAIN,
                message.intent,
                slots={name: {"value": value} for name, value in message.slots.items()},
                language=self.satellite.info.language,
                assistant=ASSISTANT,
            )
        except intent.UnknownIntent:
            _LOGGER.debug("%s is not an HA intent; left to automations", message.intent)
            return
        except intent.IntentError as err:
            _LOGGER.info(
                "Intent %s from %s failed: %s", message.intent, self.satellite.satellite_id, err
            )
            await self.satellite.async_respond(message.utterance_id, "Sorry, I couldn't do that.")
            return
        self.handled += 1
        await self.satellite.async_respond(message.utterance_id, _speech(response))


def _speech(response: intent.IntentResponse) -> str:
    plain = response.speech.get("plain", {}).get("speech")
    if plain:
        return str(plain)
    if response.response_type is intent.IntentResponseType.ERROR:
        return "Sorry, I couldn't do that."
    names = [target.name for target in response.success_results]
    return f"Done: {', '.join(names)}." if names else "Done."


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
