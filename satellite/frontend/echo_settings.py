"""Settings of echo cancellation (config section ``frontend.echo``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import voluptuous as vol

from ..config_base import (
    Section,
    check_boolean,
    check_choice,
    check_integer,
    check_number,
    check_optional,
    option,
)
from .echo_engines import ECHO_ENGINES
from .echo_mdf import ADAPTATIONS

#: Words that stop a reply said over it: the care intents' Stop sentences
#: (satellite/nlu/care_en.yaml) and Home Assistant's HassNevermind, plus "cancel".
STOP_WORDS = ("stop", "cancel", "be quiet", "silence", "shut up", "never mind")


def _stop_words(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise vol.Invalid(
            f"expected a non-empty list of words, got {value!r}. Fix: list words such as "
            "stop, cancel"
        )
    words = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise vol.Invalid(f"expected a word, got {item!r}. Fix: write each word as text")
        words.append(" ".join(item.lower().split()))
    return tuple(words)


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
        "speex (libspeexdsp1: keeps a person who talks over the reply), mdf (our own, "
        "numpy: stops learning while a person talks over the reply, so it keeps more of "
        "them) or webrtc (AEC3, extra echo, +40 MB: more echo out, but it also mutes such "
        "a person)",
    )
    tail_ms: int | None = option(
        None,
        check_optional(check_integer(50, 1000, " ms")),
        "speex, mdf: the room's echo tail it learns, ms (null: speex 200, mdf 600)",
    )
    mdf_adaptation: str = option(
        "nlms",
        check_choice(tuple(ADAPTATIONS)),
        "mdf: how its filter learns: nlms (normalised LMS) or kalman (a frequency-domain "
        "Kalman filter: more echo out sooner, and a person talking over the first reply "
        "spoils it far less, but the recognizer heard people over replies far worse with "
        "it: see README)",
    )
    residual_gate: bool = option(
        False,
        check_boolean,
        "mdf: take down, while the satellite speaks, whole frames that hold only what the "
        "filter leaves of the reply (a person's frames pass whole; never below the room's "
        "noise): 25 dB or more out from 1 s into a new room's first reply, but words "
        "over replies were heard worse with it at RT60 0.6 s (see README)",
    )
    latency_ms: int | None = option(
        0,
        check_optional(check_integer(0, 1000, " ms")),
        "From handing audio to a sound card that plays nothing to hearing it (the device's "
        "own delay: its queues are followed), ms; 0 or null when unknown: the canceller "
        "finds any further delay within its tail",
    )
    hear_while_speaking: bool = option(
        True,
        check_boolean,
        "With echo cancellation on: a stop word said over a reply stops it, no wake word "
        "needed (a keyword search on the echo-cancelled audio while the satellite speaks); "
        "other speech over it pauses it and is heard as an utterance, and a reply no "
        "longer waits for the follow-on window",
    )
    stop_words: tuple[str, ...] = option(
        STOP_WORDS, _stop_words, "Words and phrases that stop a reply said over it"
    )
    stop_margin_db: float = option(
        9.0,
        check_number(0.0, 30.0, " dB"),
        "How much louder than the echo left of the reply a stop word must be, dB (0-30; "
        "raised by itself in a room where the satellite's own voice comes close): lower "
        "hears quieter people and risks the satellite stopping itself",
    )
    talk_over_margin_db: float = option(
        12.0,
        check_number(0.0, 30.0, " dB"),
        "How much louder than the echo left of the reply speech over it must be to pause "
        "it, dB (0-30; raised by itself in a room where the satellite's own voice comes "
        "close): lower hears quieter people and risks the satellite pausing itself",
    )
    ask_again_over_reply: bool = option(
        True,
        check_boolean,
        "A command heard over a reply is asked about once more ('Sorry, say that "
        "again'; a call for help: 'Do you need help?') instead of acted on; a stop is "
        "acted on. What is left of the reply's echo leads the recognizer to sure but "
        "wrong commands",
    )
