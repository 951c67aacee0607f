"""Device triggers: help requested, rushed speech, alert cleared.

Each is an event trigger on the bus event the component fires once per alert
(const.EVENT_HELP, EVENT_ALERT, EVENT_ALERT_CLEARED), narrowed to this device.
"""

from __future__ import annotations

from typing import Any, Final

import voluptuous as vol
from homeassistant.components.device_automation import DEVICE_TRIGGER_BASE_SCHEMA
from homeassistant.components.homeassistant.triggers import event as event_trigger
from homeassistant.const import (
    ATTR_DEVICE_ID,
    CONF_DEVICE_ID,
    CONF_DOMAIN,
    CONF_EVENT,
    CONF_EVENT_DATA,
    CONF_PLATFORM,
    CONF_TYPE,
)
from homeassistant.core import CALLBACK_TYPE, HomeAssistant
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.trigger import TriggerActionType, TriggerInfo
from homeassistant.helpers.typing import ConfigType

from .const import ALERT_RUSHED_SPEECH, DOMAIN, EVENT_ALERT, EVENT_ALERT_CLEARED, EVENT_HELP

#: Trigger type -> the bus event and the event data it matches besides the device.
TRIGGERS: Final[dict[str, tuple[str, dict[str, Any]]]] = {
    "help_requested": (EVENT_HELP, {}),
    "rushed_speech": (EVENT_ALERT, {"kind": ALERT_RUSHED_SPEECH}),
    "alert_cleared": (EVENT_ALERT_CLEARED, {}),
}

TRIGGER_SCHEMA: Final = DEVICE_TRIGGER_BASE_SCHEMA.extend(
    {vol.Required(CONF_TYPE): vol.In(list(TRIGGERS))}
)


async def async_get_triggers(hass: HomeAssistant, device_id: str) -> list[dict[str, Any]]:
    """The triggers of a Pocket Satellite device (none for another device)."""
    device = dr.async_get(hass).async_get(device_id)
    if device is None or not any(domain == DOMAIN for domain, _ in device.identifiers):
        return []
    return [
        {CONF_PLATFORM: "device", CONF_DEVICE_ID: device_id, CONF_DOMAIN: DOMAIN, CONF_TYPE: kind}
        for kind in TRIGGERS
    ]


async def async_attach_trigger(
    hass: HomeAssistant,
    config: ConfigType,
    action: TriggerActionType,
    trigger_info: TriggerInfo,
) -> CALLBACK_TYPE:
    """Listen for the trigger's bus event from this device."""
    event_type, match = TRIGGERS[config[CONF_TYPE]]
    event_config = event_trigger.TRIGGER_SCHEMA(
        {
            CONF_PLATFORM: CONF_EVENT,
            event_trigger.CONF_EVENT_TYPE: event_type,
            CONF_EVENT_DATA: {ATTR_DEVICE_ID: config[CONF_DEVICE_ID], **match},
        }
    )
    return await event_trigger.async_attach_trigger(
        hass, event_config, action, trigger_info, platform_type="device"
    )
