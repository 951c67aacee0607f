"""What Home Assistant sets on the satellite through ``control``: mute, volume, wake words.

The satellite forgets volume and wake words when it restarts (its satellite.yaml holds
the defaults), so Home Assistant keeps what was chosen (the entities restore it after a
restart of HA) and sends it again each time the satellite comes back online. Mute is
the satellite's own ``state`` (``muted``), which it publishes retained.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from homeassistant.components import mqtt
from homeassistant.core import CALLBACK_TYPE, callback
from homeassistant.exceptions import HomeAssistantError

from .const import DOMAIN

if TYPE_CHECKING:
    from .device import PocketSatellite


class SatelliteControls:
    """The settings Home Assistant gives one satellite."""

    def __init__(self, satellite: PocketSatellite) -> None:
        self.satellite = satellite
        self.volume: float | None = None
        """0-1, or None while Home Assistant has not set it (the satellite's own)."""
        self._wake_words: tuple[str, ...] | None = None
        self._was_online = False

    @callback
    def async_start(self) -> CALLBACK_TYPE:
        """Send the settings again whenever the satellite comes back online."""
        return self.satellite.add_listener("status", self._on_status)

    @property
    def muted(self) -> bool:
        """The satellite says it is muted."""
        return self.satellite.state == "muted"

    @property
    def wake_words(self) -> tuple[str, ...]:
        """The wake words listened for: the chosen ones it still has, else all it has."""
        loaded = self.satellite.info.wake_words
        chosen = tuple(w for w in self._wake_words or () if w in loaded)
        return chosen or loaded

    @callback
    def restore(self, volume: float | None = None, wake_words: tuple[str, ...] = ()) -> None:
        """Settings an entity restored after a restart of Home Assistant."""
        if volume is not None:
            self.volume = volume
        if wake_words:
            self._wake_words = wake_words

    async def async_set_muted(self, muted: bool) -> None:
        """Mute or unmute the microphone."""
        await self._send({"command": "mute" if muted else "unmute"})

    async def async_set_volume(self, volume: float) -> None:
        """Set the output volume, 0-1."""
        self.volume = min(1.0, max(0.0, volume))
        self.satellite.notify("settings")
        await self._send({"command": "volume", "volume": self.volume})

    async def async_set_wake_words(self, wake_words: list[str] | tuple[str, ...]) -> None:
        """Listen only for these (some of the satellite's ``info.wake_words``)."""
        loaded = self.satellite.info.wake_words
        unknown = [w for w in wake_words if w not in loaded]
        if unknown or not wake_words:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="unknown_wake_word",
                translation_placeholders={
                    "wake_words": ", ".join(unknown) or "none",
                    "loaded": ", ".join(loaded),
                },
            )
        self._wake_words = tuple(wake_words)
        self.satellite.notify("settings")
        await self._send_wake_words()

    async def _send_wake_words(self) -> None:
        await self._send({"command": "wake_words", "wake_words": list(self.wake_words)})

    @callback
    def _on_status(self) -> None:
        online = self.satellite.available
        if online and not self._was_online:
            self.satellite.hass.async_create_task(self._resend(), eager_start=True)
        self._was_online = online

    async def _resend(self) -> None:
        if self.volume is not None:
            await self._send({"command": "volume", "volume": self.volume})
        if self._wake_words is not None:
            await self._send_wake_words()

    async def _send(self, data: dict[str, Any]) -> None:
        await mqtt.async_publish(
            self.satellite.hass,
            self.satellite.topic("control"),
            json.dumps(data),
            qos=1,
            retain=False,
        )
