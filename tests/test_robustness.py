"""Every voice family in every room (tests/corpus.py), judged per family, never on one
average: precision first in noise, and a wake word that holds on every voice.

The CI set is one voice per family (eSpeak NG, flite, Festival) in a clean room, white
noise and babble 10 dB below the speech, on a handful of commands; ``slow`` runs every
voice and room. The thresholds are what bench/robustness.py measured (README), with room
for the few scenes here.
"""

from __future__ import annotations

from typing import Any

import pytest

from satellite.config import Config
from satellite.understanding import Understanding
from tests import corpus, robustness
from tests.understand import commands, lines

#: Commands of the CI set: every STEP-th of tests/data/commands.tsv.
CI_STEP = 8
#: Out-of-domain sentences of the CI set: every STEP-th.
CI_OOD_STEP = 6
#: The wake word heard clean, per family, at least this share of the time (CI set).
WAKE_CLEAN_AT_LEAST = 0.85


@pytest.fixture(scope="module")
def listener() -> Understanding:
    return robustness.listener(Config())


def _judge_family(
    understanding: Understanding,
    voices: tuple[corpus.Voice, ...],
    family: str,
    room: corpus.Room,
    step: int,
) -> robustness.Tally:
    members = [v for v in corpus.available(voices) if v.family == family]
    assert members, f"no {family} voice installed: run scripts/bootstrap.sh"
    tally = robustness.Tally()
    for index, (text, intent, slots) in enumerate(commands()[::step]):
        voice = members[index % len(members)]
        what, _ = robustness.judge(Config(), understanding, voice, text, room, intent, slots, index)
        tally.add(what)
    return tally


def _precise(tally: robustness.Tally) -> dict[str, Any]:
    return tally.to_dict()


@pytest.mark.parametrize("room", corpus.ROOMS_CI, ids=lambda r: r.label)
@pytest.mark.parametrize("family", corpus.FAMILIES)
def test_no_wrong_intent_and_no_false_call_for_help(
    listener: Understanding, family: str, room: corpus.Room
) -> None:
    """Precision first: in every room, each family's commands come out right, asked
    again, or not understood; never a wrong command, never a false alarm."""
    tally = _judge_family(listener, corpus.VOICES_CI, family, room, CI_STEP)
    assert tally.counts[robustness.WRONG] == 0, _precise(tally)
    assert tally.counts[robustness.FALSE_HELP] == 0, _precise(tally)


@pytest.mark.parametrize("family", ["flite", "festival"])
def test_recorded_speech_voices_are_understood_clean(listener: Understanding, family: str) -> None:
    """Right at once or after asking once more (which counts as right, reported apart)."""
    tally = _judge_family(listener, corpus.VOICES_CI, family, corpus.Room("clean"), CI_STEP)
    right = tally.share(robustness.RIGHT) + tally.share(robustness.RIGHT_AFTER_ASKING)
    assert right >= 0.85, _precise(tally)


@pytest.mark.parametrize("room", [corpus.Room("clean"), corpus.Room("white", 10.0)], ids=str)
def test_out_of_domain_speech_never_switches_a_device(
    listener: Understanding, room: corpus.Room
) -> None:
    config = Config()
    for index, text in enumerate(lines("out_of_domain.txt")[::CI_OOD_STEP]):
        voice = corpus.VOICES_CI[index % len(corpus.VOICES_CI)]
        scene = robustness.scene(voice, text, room, index)
        heard = robustness.replay(config, scene.audio, False, listener)
        acted = robustness.acted_on(heard.first)
        assert not robustness.device_switched_by(acted), (voice.label, text, acted)
        assert acted is None or acted.intent != "CallForHelp", (voice.label, text, acted)


@pytest.mark.parametrize("family", corpus.FAMILIES)
def test_the_default_wake_word_input_hears_every_family_clean(family: str) -> None:
    """The old default (speex at 30 dB) lost flite's slt entirely; what the wake word
    hears by default must hold on every family."""
    voice = next(v for v in corpus.VOICES_CI if v.family == family)
    hears = robustness.default_wake_input(Config())
    rows = commands()[::CI_STEP]
    woke = sum(
        bool(robustness.wake_hits(robustness.scene(voice, t, corpus.Room("clean"), i).audio, hears))
        for i, (t, _, _) in enumerate(rows)
    )
    assert woke / len(rows) >= WAKE_CLEAN_AT_LEAST, (voice.label, hears, woke, len(rows))


@pytest.mark.slow
@pytest.mark.xfail(
    reason="issue 18's target, not met yet in every room (white 10 dB: a Festival command "
    "misheard the same way twice and acted on, 6 %; README 'Every voice, every room')",
    strict=False,
)
@pytest.mark.parametrize("room", corpus.ROOMS_ALL, ids=lambda r: r.label)
@pytest.mark.parametrize("family", corpus.FAMILIES)
def test_every_voice_and_room_wrong_intents_stay_rare(
    listener: Understanding, family: str, room: corpus.Room
) -> None:
    tally = _judge_family(listener, corpus.VOICES_ALL, family, room, 2)
    assert tally.share(robustness.WRONG) <= 0.02, _precise(tally)
    assert (
        tally.share(robustness.FALSE_HELP) <= 0.005 or tally.counts[robustness.FALSE_HELP] == 0
    ), _precise(tally)
