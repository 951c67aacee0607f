"""Settings of the player (the ``player`` section of the config)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config_base import _integer, _opt, _Section


@dataclass(frozen=True)
class PlayerSettings(_Section):
    """The playback thread between synthesis and the speaker."""

    rate_hz: int = _opt(
        22050,
        _integer(8000, 48000, " Hz"),
        "Output sample rate, Hz (8000-48000); synthesis is converted to it",
    )
    lead_in_ms: int = _opt(
        100,
        _integer(0, 1000, " ms"),
        "Silence played before a reply so its first syllable is not clipped, ms (0-1000)",
    )
    prebuffer_ms: int = _opt(
        60,
        _integer(0, 2000, " ms"),
        "Audio gathered before output starts or resumes (jitter buffer), ms (0-2000)",
    )
    max_buffer_ms: int = _opt(
        3000,
        _integer(200, 60000, " ms"),
        "Most audio held in the player; synthesis waits beyond it, ms (200-60000)",
    )
    period_ms: int = _opt(
        20, _integer(5, 100, " ms"), "Size of each write to the output, ms (5-100)"
    )
    device_queue_ms: int = _opt(
        40,
        _integer(10, 2000, " ms"),
        "Queue of the ALSA output thread, ms (10-2000); with the ring "
        "buffer it bounds what still plays after stop",
    )
