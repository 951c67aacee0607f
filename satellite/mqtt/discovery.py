"""Home Assistant MQTT discovery: plain sensors for users without the custom component.

Every config is retained under ``<prefix>/<component>/<satellite id>/<key>/config``,
grouped under one device, with availability from the ``status`` topic. They are sent
again whenever Home Assistant announces ``online`` on ``<prefix>/status``.
"""

from __future__ import annotations

import json
from typing import Any

from .payloads import Info
from .topics import OFFLINE, ONLINE, STATUS, Topics

#: The rushed-speech binary sensor turns itself off this long after an alert, s.
RUSHED_SPEECH_HOLD_SECONDS = 300


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
    ]
    out: list[tuple[str, bytes]] = []
    for component, key, config in entities:
        payload = {**config, **common, "unique_id": f"pocket_satellite_{info.id}_{key}"}
        topic = f"{topics.discovery_prefix}/{component}/{info.id}/{key}/config"
        out.append((topic, json.dumps(payload, separators=(",", ":")).encode()))
    return out
