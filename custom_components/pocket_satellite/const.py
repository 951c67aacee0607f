"""Constants for the Pocket Satellite integration."""

from __future__ import annotations

import re
from typing import Final

DOMAIN: Final = "pocket_satellite"
CONF_SATELLITE_ID: Final = "satellite_id"
CONF_BASE_TOPIC: Final = "base_topic"
CONF_INFO: Final = "info"
DEFAULT_BASE_TOPIC: Final = "pocket_satellite"
SATELLITE_ID_PATTERN: Final = re.compile(r"[a-z0-9_]{1,32}")
BASE_TOPIC_PATTERN: Final = re.compile(r"[A-Za-z0-9_\-]+(/[A-Za-z0-9_\-]+)*")

#: How long the config flow waits for the satellite's retained ``info``, s.
INFO_TIMEOUT_SECONDS: Final = 5.0
#: How long an announcement may take before announce returns anyway, s.
SAY_TIMEOUT_SECONDS: Final = 60.0
#: How long a TTS request waits for the satellite's WAV, s.
TTS_TIMEOUT_SECONDS: Final = 10.0
#: The rushed-speech sensor turns off this long after the last alert, s.
RUSHED_SPEECH_HOLD_SECONDS: Final = 300.0
#: Exposed-entity changes are gathered this long before ``slots`` is published, s.
SLOTS_COOLDOWN_SECONDS: Final = 2.0
#: Ids of recent QoS 1 messages remembered to drop redeliveries.
SEEN_IDS: Final = 512
#: Largest payload accepted from the satellite (WAVs are exempt), bytes.
MAX_PAYLOAD_BYTES: Final = 64 * 1024

#: Retained while the component is configured for a satellite (its discovery stops).
COMPONENT_TOPIC: Final = "component"
#: The MQTT contract version this component speaks (``info.protocol``).
PROTOCOL_VERSION: Final = 1

EVENT_INTENT: Final = "pocket_satellite_intent"
EVENT_HELP: Final = "pocket_satellite_help"
#: Fired once per rushed-speech alert (``alert``), for automations and device triggers.
EVENT_ALERT: Final = "pocket_satellite_alert"
#: Fired when the satellite says the speaker is calm again (``kind`` rushed_speech) or
#: someone clears a help request (``kind`` help).
EVENT_ALERT_CLEARED: Final = "pocket_satellite_alert_cleared"
ALERT_HELP: Final = "help"
#: Ids of fired alerts remembered (in HA's storage) so each fires once.
FIRED_ALERT_IDS: Final = 512
SERVICE_CLEAR_HELP: Final = "clear_help_request"
SERVICE_ENROL: Final = "enrol_speaker"
SERVICE_CANCEL_ENROL: Final = "cancel_enrolment"
ALERT_RUSHED_SPEECH: Final = "rushed_speech"
