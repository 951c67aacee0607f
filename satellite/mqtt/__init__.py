"""The MQTT link between the satellite and Home Assistant (see README, "MQTT contract")."""

from .link import LinkStats, MqttConfigError, MqttLink
from .outbox import Outbox, OutboxError, OutboxMessage
from .payloads import (
    Command,
    Control,
    Envelope,
    Info,
    PayloadError,
    SayDone,
    SayRequest,
    Slots,
    SpokenResponse,
    TtsFailed,
    TtsRequest,
    decode_event,
    decode_inbound,
    encode_event,
)
from .settings import MqttCredentialsError, MqttSettings
from .topics import ROUTES, Route, Topics

__all__ = [
    "ROUTES",
    "Command",
    "Control",
    "Envelope",
    "Info",
    "LinkStats",
    "MqttConfigError",
    "MqttCredentialsError",
    "MqttLink",
    "MqttSettings",
    "Outbox",
    "OutboxError",
    "OutboxMessage",
    "PayloadError",
    "Route",
    "SayDone",
    "SayRequest",
    "Slots",
    "SpokenResponse",
    "Topics",
    "TtsFailed",
    "TtsRequest",
    "decode_event",
    "decode_inbound",
    "encode_event",
]
