"""MQTT settings: broker, credentials, TLS, the on-disk outbox, discovery and privacy."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config_base import (
    Section,
    check_boolean,
    check_integer,
    check_number,
    check_optional,
    check_path,
    check_pattern,
    option,
)
from ..errors import SatelliteError

_TOPIC_PREFIX = r"[A-Za-z0-9_\-]+(/[A-Za-z0-9_\-]+)*"


class MqttCredentialsError(SatelliteError):
    """The password file named in the settings cannot be read."""


@dataclass(frozen=True)
class MqttSettings(Section):
    """How the satellite reaches its MQTT broker and what it publishes there."""

    enabled: bool = option(True, check_boolean, "Connect to MQTT at all (false: run offline)")
    host: str = option(
        "localhost",
        check_pattern(
            r"[A-Za-z0-9.\-:\[\]]{1,253}", "a host name. Fix: write a name or an IP address"
        ),
        "Broker host name or IP address",
    )
    port: int | None = option(
        None,
        check_optional(check_integer(1, 65535)),
        "Broker TCP port (1-65535); null = 1883, or 8883 with TLS",
    )
    username: str | None = option(
        None,
        check_optional(check_pattern(r".{1,256}", "a user name")),
        "User name; null = anonymous",
    )
    password: str | None = option(
        None,
        check_optional(check_pattern(r".{1,256}", "a password")),
        "Password (prefer password_file); null = none",
    )
    password_file: str | None = option(
        None,
        check_optional(check_path("a file holding the password")),
        "File whose first line is the password; wins over password",
    )
    tls: bool = option(False, check_boolean, "Use TLS (also implied by tls_ca_file)")
    tls_ca_file: str | None = option(
        None,
        check_optional(check_path("a CA certificate (PEM)")),
        "CA certificate, PEM; null = system CAs",
    )
    tls_cert_file: str | None = option(
        None, check_optional(check_path("a client certificate (PEM)")), "Client certificate, PEM"
    )
    tls_key_file: str | None = option(
        None, check_optional(check_path("a client key (PEM)")), "Client private key, PEM"
    )
    keepalive_seconds: int = option(
        30, check_integer(5, 3600, " s"), "MQTT keep-alive interval, s (5-3600)"
    )
    reconnect_min_seconds: float = option(
        1.0, check_number(0.01, 60.0, " s"), "First reconnect delay, s (0.01-60); doubles each try"
    )
    reconnect_max_seconds: float = option(
        60.0, check_number(0.1, 3600.0, " s"), "Longest reconnect delay, s (0.1-3600)"
    )
    outbox_path: str = option(
        "~/.local/state/pocket-satellite/outbox.sqlite3",
        check_path("the outbox database file"),
        "On-disk outbox for QoS 1 events (SQLite file)",
    )
    outbox_max_messages: int = option(
        10000,
        check_integer(10, 1_000_000),
        "Outbox bound (10-1000000); beyond it the oldest are dropped and counted",
    )
    outbox_fsync: bool = option(
        False,
        check_boolean,
        "fsync every outbox write: also survives a power cut, at a disk sync per event",
    )
    discovery: bool = option(
        True,
        check_boolean,
        "Announce entities by HA MQTT discovery (none while the HA component is configured)",
    )
    discovery_prefix: str = option(
        "homeassistant",
        check_pattern(_TOPIC_PREFIX, "a topic prefix. Fix: use letters, digits, _ - and /"),
        "HA MQTT discovery prefix",
    )
    base_topic: str = option(
        "pocket_satellite",
        check_pattern(_TOPIC_PREFIX, "a topic prefix. Fix: use letters, digits, _ - and /"),
        "Topics live under <base_topic>/<satellite id>/",
    )
    publish_transcripts: bool = option(
        False, check_boolean, "Privacy: publish what was said on transcript (off by default)"
    )
    max_payload_bytes: int = option(
        65536, check_integer(1024, 1_048_576, " bytes"), "Largest accepted incoming payload, bytes"
    )

    @property
    def use_tls(self) -> bool:
        """True when TLS is on, explicitly or through a CA or client certificate."""
        return self.tls or self.tls_ca_file is not None or self.tls_cert_file is not None

    @property
    def effective_port(self) -> int:
        """The configured port, or MQTT's default for plain TCP or TLS."""
        if self.port is not None:
            return self.port
        return 8883 if self.use_tls else 1883

    @property
    def outbox_file(self) -> Path:
        """The outbox path with ``~`` expanded."""
        return Path(self.outbox_path).expanduser()

    def read_password(self) -> str | None:
        """The password: the first line of ``password_file`` when set, else ``password``."""
        if self.password_file is None:
            return self.password
        path = Path(self.password_file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise MqttCredentialsError(
                f"mqtt.password_file: cannot read {path} ({err}). Fix: point it at a "
                "readable UTF-8 file whose first line is the broker password"
            ) from None
        lines = text.splitlines()
        return lines[0] if lines else ""
