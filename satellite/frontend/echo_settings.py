"""Settings of echo cancellation (config section ``frontend.echo``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config_base import (
    Section,
    check_boolean,
    check_choice,
    check_integer,
    check_optional,
    option,
)
from .echo_engines import ECHO_ENGINES


@dataclass(frozen=True)
class EchoSettings(Section):
    """Acoustic echo cancellation: the satellite's own voice out of its microphone."""

    enabled: bool = option(
        False,
        check_boolean,
        "Take the speaker's echo out of the microphone while the satellite speaks",
    )
    engine: str = option(
        "speex",
        check_choice(ECHO_ENGINES),
        "speex (libspeexdsp1: keeps a person who talks over the reply) or webrtc (AEC3, "
        "extra echo, +40 MB: more echo out, but it also mutes such a person)",
    )
    tail_ms: int = option(
        200, check_integer(50, 1000, " ms"), "speex: the room's echo tail it learns, ms"
    )
    latency_ms: int | None = option(
        None,
        check_optional(check_integer(0, 1000, " ms")),
        "From handing audio to the sound card to hearing it, ms (null: player.device_queue_ms)",
    )
