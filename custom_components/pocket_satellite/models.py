"""Typed runtime data of a Pocket Satellite config entry."""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntry

from .device import PocketSatellite


@dataclass
class RuntimeData:
    """What the platforms share: the satellite's MQTT client."""

    satellite: PocketSatellite


type PocketConfigEntry = ConfigEntry[RuntimeData]
