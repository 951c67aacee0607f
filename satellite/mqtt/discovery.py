"""Home Assistant MQTT discovery: entities for users without the custom component.

Sensors (state, last intent, speech rate), a rushed-speech binary sensor, event entities
for help requests and alerts, a mute switch, a volume number and a notify entity that
says its message. Every config is retained under
``<prefix>/<component>/<satellite id>/<key>/config``, grouped under one device, with
availability from the ``status`` topic. They are sent again whenever Home Assistant
announces ``online`` on ``<prefix>/status``.

While the custom component is configured for the satellite it keeps a retained
``component`` message (``{"configured": true}``): the satellite then removes these configs
(an empty retained payload each) and sends none, so no entity appears twice; when the
component's entry is removed the message is cleared and discovery returns.
"""

from __future__ import annotations

import json
from typing import Any

from .payloads import Info
from .topics import OFFLINE, ONLINE, STATUS, Topics

#: The rushed-speech binary sensor turns itself off this long after an alert, s.
RUSHED_SPEECH_HOLD_SECONDS = 300


def component_configured(payload: bytes) -> bool:
    """Whether a ``component`` payload says the custom component is configured (an empty
    payload, the retained message cleared, says it is not)."""
    try:
        data = json.loads(payload) if payload else None
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("configured") is True


def discovery_messages(topics: Topics, info: Info) -> list[tuple[str, bytes]]:
    """(topic, payload) of each discovery config for this satellite."""
    device = {
        "identifiers": [f"pocket_satellite_{info.id}"],
        "name": info.name,
        "manufacturer": "Pocket Satellite",
        "model": "Pocket Satellite",
        "sw_version": info.version,
    }
    common: dict[str, Any] = {
        "availability_topic": topics.full(STATUS),
        "payload_available": ONLINE,
        "payload_not_available": OFFLINE,
        "device": device,
    }
    entities: list[tuple[str, str, dict[str, Any]]] = [
        (
            "sensor",
            "state",
            {
                "name": "State",
                "state_topic": topics.full("state"),
                "value_template": "{{ value_json.state }}",
                "icon": "mdi:account-voice",
            },
        ),
        (
            "sensor",
            "last_intent",
            {
                "name": "Last intent",
                "state_topic": topics.full("intent"),
                "value_template": "{{ value_json.intent }}",
                "json_attributes_topic": topics.full("intent"),
            },
        ),
        (
            "sensor",
            "speech_rate",
            {
                "name": "Speech rate",
                "state_topic": topics.full("prosody"),
                "value_template": "{{ value_json.syllables_per_second }}",
                "unit_of_measurement": "syl/s",
                "state_class": "measurement",
                "suggested_display_precision": 1,
            },
        ),
        (
            "binary_sensor",
            "rushed_speech",
            {
                "name": "Rushed speech",
                "state_topic": topics.full("alert"),
                "value_template": ("{{ 'ON' if value_json.kind == 'rushed_speech' else 'OFF' }}"),
                "off_delay": RUSHED_SPEECH_HOLD_SECONDS,
                "json_attributes_topic": topics.full("alert"),
            },
        ),
        (
            "event",
            "help",
            {
                "name": "Help",
                "state_topic": topics.full("help"),
                "event_types": ["help"],
                "value_template": (
                    '{"event_type": "help", "severity": {{ value_json.severity | tojson }}, '
                    '"id": {{ value_json.id | tojson }}, '
                    '"utterance_id": {{ value_json.utterance_id | tojson }}}'
                ),
                "icon": "mdi:hospital-box",
            },
        ),
        (
            "event",
            "alert",
            {
                "name": "Alert",
                "state_topic": topics.full("alert"),
                "event_types": ["rushed_speech"],
                "value_template": (
                    '{"event_type": {{ value_json.kind | tojson }}, '
                    '"severity": {{ value_json.severity | tojson }}, '
                    '"ratio": {{ value_json.ratio | tojson }}}'
                ),
            },
        ),
        (
            "switch",
            "mute",
            {
                "name": "Mute",
                "command_topic": topics.full("control"),
                "payload_on": '{"command": "mute"}',
                "payload_off": '{"command": "unmute"}',
                "state_topic": topics.full("state"),
                "value_template": "{{ 'ON' if value_json.state == 'muted' else 'OFF' }}",
                "icon": "mdi:microphone-off",
            },
        ),
        (
            "number",
            "volume",
            {
                "name": "Volume",
                "command_topic": topics.full("control"),
                "command_template": '{"command": "volume", "volume": {{ value / 100 }}}',
                "min": 0,
                "max": 100,
                "step": 1,
                "unit_of_measurement": "%",
                "mode": "slider",
                "optimistic": True,
                "entity_category": "config",
            },
        ),
        (
            "notify",
            "say",
            {
                "name": "Say",
                "command_topic": topics.full("say"),
                "command_template": '{"text": {{ value | tojson }}}',
            },
        ),
    ]
    out: list[tuple[str, bytes]] = []
    for component, key, config in entities:
        payload = {**config, **common, "unique_id": f"pocket_satellite_{info.id}_{key}"}
        topic = f"{topics.discovery_prefix}/{component}/{info.id}/{key}/config"
        out.append((topic, json.dumps(payload, separators=(",", ":")).encode()))
    return out
