"""Settings of the player (the ``player`` section of the config)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config_base import Section, check_integer, option


@dataclass(frozen=True)
class PlayerSettings(Section):
    """The playback thread between synthesis and the speaker."""

    rate_hz: int = option(
        22050,
        check_integer(8000, 48000, " Hz"),
        "Output sample rate, Hz (8000-48000); synthesis is converted to it",
    )
    lead_in_ms: int = option(
        30,
        check_integer(0, 1000, " ms"),
        "Silence played before a reply after a quiet spell so its first syllable is not "
        "clipped while the output wakes up, ms (0-1000)",
    )
    prebuffer_ms: int = option(
        60,
        check_integer(0, 2000, " ms"),
        "Audio gathered before output starts or resumes (jitter buffer), ms (0-2000)",
    )
    max_buffer_ms: int = option(
        3000,
        check_integer(200, 60000, " ms"),
        "Most audio held in the player; synthesis waits beyond it, ms (200-60000)",
    )
    period_ms: int = option(
        20, check_integer(5, 100, " ms"), "Size of each write to the output, ms (5-100)"
    )
    device_queue_ms: int = option(
        40,
        check_integer(10, 2000, " ms"),
        "Queue of the ALSA output thread, ms (10-2000); with the ring "
        "buffer it bounds what still plays after stop",
    )
