"""Settings of the satellite as an appliance: its metrics."""

from __future__ import annotations

from dataclasses import dataclass

from ..config_base import Section, check_integer, check_optional, check_pattern, option


@dataclass(frozen=True)
class MetricsSettings(Section):
    """Counters and gauges: retained on ``metrics`` and, optionally, for Prometheus."""

    interval_seconds: int = option(
        60, check_integer(5, 3600, "s"), "Seconds between metrics on MQTT (5-3600)"
    )
    prometheus_port: int | None = option(
        None,
        check_optional(check_integer(1024, 65535)),
        "Serve the metrics as Prometheus text on this port (null: no endpoint)",
    )
    prometheus_host: str = option(
        "127.0.0.1",
        check_pattern(
            r"^[0-9A-Za-z.:\-]+$",
            "a host name or address. Fix: use an address such as 127.0.0.1, or a host name",
        ),
        "Address the Prometheus endpoint listens on (127.0.0.1: this machine only)",
    )
