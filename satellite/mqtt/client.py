"""Building the paho client: identity, last will, credentials, TLS, socket, backoff."""

from __future__ import annotations

import logging
import random
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from ..errors import SatelliteError
from .settings import MqttSettings
from .topics import OFFLINE

_LOGGER = logging.getLogger(__name__)


class MqttConfigError(SatelliteError):
    """The MQTT settings cannot be used (TLS files, credentials)."""


@dataclass
class LinkStats:
    """Counters for logs, diagnostics and tests."""

    connect_attempts: int = 0
    connects: int = 0
    refused: int = 0
    published: int = 0
    acknowledged: int = 0
    not_connected_dropped: int = 0
    queue_full_dropped: int = 0
    private_skipped: int = 0
    unrouted: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    #: Failed connect attempts by kind (exception name, ``closed_early``, ``refused:...``).
    failures: dict[str, int] = field(default_factory=dict)
    accepted: int = 0


def make_client(settings: MqttSettings, client_id: str, status_topic: str) -> mqtt.Client:
    """A paho client with a persistent session, the last will, credentials and TLS.

    Raises MqttConfigError (TLS files) or MqttCredentialsError (password file).
    """
    client = mqtt.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=False,
        protocol=mqtt.MQTTv311,
    )
    client.suppress_exceptions = True
    client.will_set(status_topic, OFFLINE, qos=1, retain=True)
    password = settings.read_password()
    if settings.username is not None or password is not None:
        client.username_pw_set(settings.username or "", password)
    if settings.use_tls:
        try:
            client.tls_set(
                ca_certs=settings.tls_ca_file,
                certfile=settings.tls_cert_file,
                keyfile=settings.tls_key_file,
                cert_reqs=ssl.CERT_REQUIRED,
            )
        except (OSError, ssl.SSLError) as err:
            raise MqttConfigError(
                f"mqtt.tls_*: cannot load the TLS files ({err}). Fix: point "
                "tls_ca_file, tls_cert_file and tls_key_file at readable PEM files"
            ) from None
    client.max_inflight_messages_set(100)
    return client


def set_nodelay(sock: Any) -> None:
    """TCP_NODELAY: without it, Nagle and delayed ACKs add ~44 ms per request/response."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError):
        _LOGGER.debug("Cannot set TCP_NODELAY on the MQTT socket")


def backoff_delay(
    settings: MqttSettings,
    failures: int,
    jitter: Callable[[float, float], float] = random.uniform,
) -> float:
    """Seconds before the next reconnect after ``failures`` failed tries in a row:
    ``reconnect_min_seconds`` doubling up to ``reconnect_max_seconds``, times a random
    0.5-1 so that a fleet of satellites does not reconnect in step."""
    ceiling = min(
        settings.reconnect_max_seconds, settings.reconnect_min_seconds * 2 ** min(failures, 30)
    )
    return float(ceiling * jitter(0.5, 1.0))
