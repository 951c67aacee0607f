"""The wake word select: which of its loaded wake words the satellite listens for."""

from __future__ import annotations

from homeassistant.components.select import SelectEntity, SelectEntityDescription
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.restore_state import RestoreEntity

from .device import PocketSatellite
from .entity import PocketSatelliteEntity
from .models import PocketConfigEntry

PARALLEL_UPDATES = 0

WAKE_WORD = SelectEntityDescription(
    key="wake_word", translation_key="wake_word", entity_category=EntityCategory.CONFIG
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PocketConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the wake word select."""
    async_add_entities([WakeWordSelect(entry.runtime_data.satellite)])


class WakeWordSelect(PocketSatelliteEntity, SelectEntity, RestoreEntity):
    """One wake word among the models the satellite loaded (``info.wake_words``).

    With several listened for (the Assist satellite's configuration allows it), it
    shows the first. Restored after a restart of HA, sent again when the satellite
    comes back.
    """

    listen_to = ("info", "settings")

    def __init__(self, satellite: PocketSatellite) -> None:
        super().__init__(satellite, WAKE_WORD)

    async def async_added_to_hass(self) -> None:
        """Take back the choice made before HA restarted."""
        await super().async_added_to_hass()
        last = await self.async_get_last_state()
        if last is not None and last.state in self.satellite.info.wake_words:
            self.satellite.controls.restore(wake_words=(last.state,))

    @property
    def options(self) -> list[str]:
        """The wake word models the satellite has loaded."""
        return list(self.satellite.info.wake_words)

    @property
    def current_option(self) -> str | None:
        """The (first) wake word listened for."""
        words = self.satellite.controls.wake_words
        return words[0] if words else None

    async def async_select_option(self, option: str) -> None:
        """Listen for this wake word only."""
        await self.satellite.controls.async_set_wake_words([option])
