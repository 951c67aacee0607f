"""Running as an appliance: systemd's notify protocol and watchdog, metrics."""
