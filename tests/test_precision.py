"""Precision in reverberation: the room's reverberation is judged from the command itself,
and a command heard in a reverberant room is asked about once more instead of acted on,
while a clean one is still acted on at once (real recognizer, synthesized speech)."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.config import Config, validate
from satellite.nlu import trust
from satellite.nlu.recognizer import IntentResult
from satellite.stt.reverberation import reverberation_seconds
from satellite.understanding import Understanding
from tests import corpus, robustness, synth

FESTIVAL_KAL = corpus.Voice("festival", "kal_diphone", 1.0)
FESTIVAL_KED = corpus.Voice("festival", "ked_diphone", 1.0)
FLITE_SLT = corpus.Voice("flite", "slt", 1.0)
LIGHT_ON = "turn on the kitchen light"
#: The threshold shipped (config/satellite.yaml).
ABOVE = Config().stt.reverberant_above_seconds


def _pcm(audio: synth.Float) -> bytes:
    return np.clip(np.round(audio), -32768, 32767).astype("<i2").tobytes()


def _needs(voice: corpus.Voice) -> None:
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed (scripts/bootstrap.sh installs it)")


@pytest.mark.parametrize("voice", [FLITE_SLT, FESTIVAL_KAL, corpus.VOICES_CI[0]])
def test_reverberation_is_told_from_a_dry_room(voice: corpus.Voice) -> None:
    _needs(voice)
    said = np.concatenate([corpus.speak(voice, LIGHT_ON), synth.silence(0.7)])
    floor = synth.white_noise(len(said) / synth.RATE, 15.0, seed=3)
    dry = reverberation_seconds(_pcm(said + floor))
    wet = [
        reverberation_seconds(_pcm(corpus.reverberate(said, seed) + floor)) for seed in (1, 2, 3)
    ]
    assert dry is not None and dry < ABOVE
    assert all(w is not None and w > ABOVE for w in wet), wet


def test_too_little_audio_is_not_judged() -> None:
    assert reverberation_seconds(b"") is None
    assert reverberation_seconds(b"\x00\x01" * 400) is None  # 25 ms


def test_a_reverberant_room_makes_a_sure_command_doubtful() -> None:
    settings = Config().stt
    assert trust.reverberant(ABOVE + 0.01, False, settings)
    assert not trust.reverberant(ABOVE, False, settings)
    assert not trust.reverberant(None, False, settings)
    assert not trust.reverberant(1.0, True, settings)  # noise hides the fall: loud decides
    never = validate({"stt": {"reverberant_above_seconds": 0}}).stt
    assert not trust.reverberant(1.0, False, never)
    sure = IntentResult("HassTurnOn", {"name": "kitchen light"}, 0.99)
    assert not trust.doubtful(sure, False, settings)
    assert trust.doubtful(sure, False, settings, reverberant=True)
    off = validate({"stt": {"ask_again_when_reverberant": False}}).stt
    assert not trust.doubtful(sure, False, off, reverberant=True)
    assert not trust.doubtful(IntentResult(None), False, settings, reverberant=True)


def _first(config: Config, understanding: Understanding, scene: robustness.Scene) -> str:
    """How the first hearing of ``scene`` is answered: 'doubted', 'acted: INTENT' or
    'none'."""
    heard = robustness.replay(config, scene.audio, False, understanding)
    assert heard.wakes, "the wake word was not heard"
    first = heard.first
    if first is None or first.result.intent is None:
        return "none"
    if first.doubtful:
        return "doubted"
    return f"acted: {first.result.intent} {first.result.slots}"


@pytest.fixture(scope="module")
def before() -> tuple[Config, Understanding]:
    """The satellite as it was: reverberation not judged."""
    config = validate({"stt": {"reverberant_above_seconds": 0}})
    return config, robustness.listener(config)


@pytest.fixture(scope="module")
def now() -> tuple[Config, Understanding]:
    config = Config()
    return config, robustness.listener(config)


def _reverb_seconds(understanding: Understanding) -> float | None:
    return next(reversed(understanding.reports.values())).reverb_seconds


@pytest.mark.parametrize(
    ("voice", "said", "seed", "misheard", "becomes"),
    [
        # 0.98 sure: asked about once more
        (FESTIVAL_KED, "what did you say", 50, "GetDate {}", "doubted"),
        # "turn off kitchen light", 0.97 sure, less than a reverberant room asks: not
        # understood (the same mishearing came out again when asked)
        (FESTIVAL_KAL, LIGHT_ON, 0, "HassTurnOff {'name': 'kitchen light'}", "none"),
    ],
)
def test_a_command_misheard_in_reverberation_is_not_acted_on(
    before: tuple[Config, Understanding],
    now: tuple[Config, Understanding],
    voice: corpus.Voice,
    said: str,
    seed: int,
    misheard: str,
    becomes: str,
) -> None:
    _needs(voice)
    scene = robustness.scene(voice, said, corpus.Room("reverb"), seed)
    assert _first(*before, scene) == f"acted: {misheard}"
    assert _first(*now, scene) == becomes
    reverb = _reverb_seconds(now[1])
    assert reverb is not None and reverb > ABOVE


def test_a_clean_command_is_still_acted_on_at_once(now: tuple[Config, Understanding]) -> None:
    _needs(FLITE_SLT)
    scene = robustness.scene(FLITE_SLT, LIGHT_ON, corpus.Room("clean"), seed=0)
    assert _first(*now, scene) == "acted: HassTurnOn {'name': 'kitchen light'}"
    reverb = _reverb_seconds(now[1])
    assert reverb is not None and reverb < ABOVE


@pytest.mark.parametrize(
    ("voice", "said", "seed", "below_bar"),
    [
        (FESTIVAL_KED, "help me", 2, True),  # 0.93 sure
        (FESTIVAL_KED, "i need help", 0, False),  # 0.98
        (corpus.VOICES_CI[0], "please call the nurse", 1, False),  # eSpeak, 0.996
    ],
)
def test_a_call_for_help_in_reverberation_is_asked_about_never_refused(
    now: tuple[Config, Understanding],
    voice: corpus.Voice,
    said: str,
    seed: int,
    below_bar: bool,
) -> None:
    """The reverberant room's higher bar (0.97 sure) is not for help: a call heard less
    sure than that is asked about ("Do you need help?"), not refused, and so is one
    heard surer. (Since the wake word's tail was left out of the command's audio these
    calls are heard surer: 0.95, 0.95 and 0.90 before.)"""
    _needs(voice)
    scene = robustness.scene(voice, said, corpus.Room("reverb"), seed)
    again = robustness.replay(now[0], scene.audio, False, now[1]).first
    assert again is not None and again.result.intent == "CallForHelp"
    assert (again.result.confidence < 0.97) == below_bar  # the reverberant room's bar
    assert again.doubtful
    reverb = _reverb_seconds(now[1])
    assert reverb is not None and reverb > ABOVE
