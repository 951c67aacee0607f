"""Running as an appliance: systemd's notify protocol and the watchdog, the doctor."""
