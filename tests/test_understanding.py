"""Understanding on speech made at test time: commands, out-of-domain speech, bad input.

Commands from tests/data/commands.tsv are spoken by three eSpeak NG voices at two rates
(each command by one voice/rate pair, rotating) after the wake word, clean and mixed
with white noise at 10 dB SNR, and replayed through the pipeline with streaming STT. The LLM is
left out here (tests/test_llm.py covers it): what is measured is the grammar path.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import TypeVar

import numpy as np
import pytest

from satellite.config import Config, ConfigError, validate
from satellite.errors import SatelliteError
from satellite.events import Event
from satellite.nlu.events import Transcript
from satellite.nlu.intents import DEVICE_ACTION_INTENTS
from satellite.understanding import build_understanding
from tests import synth
from tests.understand import commands, intents, lines, replay

pytestmark = pytest.mark.usefixtures("need_espeak")
T = TypeVar("T")
VOICES = [
    ("en-us", 150),
    ("en-gb-x-rp", 180),
    ("en-us+m3", 150),
    ("en-us", 180),
    ("en-gb-x-rp", 150),
    ("en-us+m3", 180),
]
#: Targets of issue 3 (intent accuracy clean / at 10 dB, out-of-domain rejection).
CLEAN_ACCURACY = 0.95
NOISY_ACCURACY = 0.85
REJECTION = 0.90
#: What the grammar path reaches today (measured 0.871 clean, 0.597 at 10 dB, with early
#: endpointing, the word-level score, the device, Home Assistant and loud-room margins,
#: in a loud room a device action heard the same raw and denoised and, in a quiet one, an
#: utterance not trusted searched again from its own mean; 0.629 at 10 dB before the Home
#: Assistant margin, which cost a state question and a timer there): the floor below
#: which a change is a regression. The targets above are not met yet (issue 3).
CLEAN_FLOOR = 0.80
NOISY_FLOOR = 0.55
#: Commands spoken by flite (a second synthesiser, four voices the thresholds were not
#: tuned on) after an eSpeak wake word: measured 61/62 clean; out-of-domain speech 35/40
#: rejected (the 0.90 target is not met for these voices), none a device action.
FLITE_VOICES = ("kal16", "slt", "rms", "awb")
FLITE_REJECTION_FLOOR = 0.85
#: Wrong device actions from the flite commands at 10 dB, at most (measured 2; 11 before
#: a device action in a loud room had to come out the same heard raw and denoised).
FLITE_LOUD_WRONG_ACTIONS = 3
#: Commands with no wake word before them (continuous listening, the ``understand``
#: command on a recording of one command), clean: the floor (measured 0.839).
COLD_FLOOR = 0.75
#: CI hears two of every five sentences (indices 0 and 2 mod 5: five is prime to the six
#: eSpeak and four flite voices, so every voice still speaks); ``pytest -m slow`` hears
#: them all. The floors hold on both: measured on each (README "Understanding").
SHARES = [
    pytest.param((0, 2), id="ci-share"),
    pytest.param((0, 1, 2, 3, 4), id="all", marks=pytest.mark.slow),
]
NOT_YET = (
    "issue 3 target not met yet: pocketsphinx en-us on eSpeak voices measured 0.871 clean, "
    "0.597 at 10 dB white noise"
)


@cache
def _config() -> Config:
    return Config()


def _understand(
    audio: synth.Float, config: Config | None = None, continuous: bool = True
) -> list[Event]:
    return replay(audio, config or _config(), continuous)[0]


def _scene(text: str, index: int, snr_db: float | None, wake: bool = False) -> synth.Float:
    voice, rate = VOICES[index % len(VOICES)]
    if wake:  # "okay nabu" first, as the satellite hears every command
        scene = synth.wake_scene(text, voice, rate, lead_seconds=0.8, tail_seconds=1.2)
        audio = scene.audio
        start, end = (round(t * synth.RATE) for t in scene.command_span)
        speech = audio[start:end]
    else:
        speech = synth.espeak(text, voice, rate)
        audio = np.concatenate([synth.silence(0.8), speech, synth.silence(1.2)])
    # a microphone never gives digital silence: a faint noise floor, as in a quiet room
    audio = audio + synth.white_noise(len(audio) / synth.RATE, 15.0, seed=index)
    if snr_db is not None:
        audio = synth.add_noise(audio, snr_db, seed=100 + index, reference=speech)
    return audio


def _share(rows: list[T], keep: tuple[int, ...]) -> list[tuple[int, T]]:
    """``rows`` with their own indices (voices rotate by index), those kept mod 5."""
    return [(index, row) for index, row in enumerate(rows) if index % 5 in keep]


@cache
def _accuracy(snr_db: float | None, keep: tuple[int, ...]) -> tuple[float, list[str]]:
    rows = _share(commands(), keep)
    wrong = []
    for index, (text, intent, slots) in rows:
        scene = _scene(text, index, snr_db, wake=True)
        found = intents(_understand(scene, continuous=False))
        ok = (
            bool(found)
            and found[0].intent == intent
            and all(found[0].slots.get(k) == v for k, v in slots.items())
        )
        if not ok:
            wrong.append(f"{text!r} -> {[(f.intent, f.slots, f.text) for f in found]}")
    return 1 - len(wrong) / len(rows), wrong


def _flite_scene(text: str, index: int, snr_db: float | None = None) -> synth.Float:
    wake = synth.espeak("okay nabu", VOICES[index % len(VOICES)][0], 150)
    command = synth.flite(text, FLITE_VOICES[index % len(FLITE_VOICES)])
    audio = np.concatenate(
        [synth.silence(0.8), wake, synth.silence(0.45), command, synth.silence(1.2)]
    )
    audio = audio + synth.white_noise(len(audio) / synth.RATE, 15.0, seed=index)
    if snr_db is not None:
        audio = synth.add_noise(audio, snr_db, seed=100 + index, reference=command)
    return audio


@pytest.mark.parametrize("keep", SHARES)
def test_commands_heard_with_no_wake_word_before_them(keep: tuple[int, ...]) -> None:
    """Each command alone in a recording, as ``understand`` hears a file: no speech before
    it to start the cepstral mean from. Measured 52 of 62 right; 38 before an utterance
    the streaming search did not trust was searched again from its own mean."""
    rows = _share(commands(), keep)
    wrong = []
    for index, (text, intent, slots) in rows:
        found = intents(_understand(_scene(text, index, None)))
        if not (
            found
            and found[0].intent == intent
            and all(found[0].slots.get(k) == v for k, v in slots.items())
        ):
            wrong.append(f"{text!r} -> {[(f.intent, f.slots, f.text) for f in found]}")
    assert 1 - len(wrong) / len(rows) >= COLD_FLOOR, wrong


@pytest.mark.usefixtures("need_flite")
@pytest.mark.parametrize("keep", SHARES)
def test_intent_accuracy_clean_with_a_second_synthesiser(keep: tuple[int, ...]) -> None:
    rows = _share(commands(), keep)
    wrong = []
    for index, (text, intent, slots) in rows:
        found = intents(_understand(_flite_scene(text, index), continuous=False))
        if not (
            found
            and found[0].intent == intent
            and all(found[0].slots.get(k) == v for k, v in slots.items())
        ):
            wrong.append(f"{text!r} -> {[(f.intent, f.slots, f.text) for f in found]}")
    assert 1 - len(wrong) / len(rows) >= CLEAN_ACCURACY, wrong


@pytest.mark.usefixtures("need_flite")
@pytest.mark.parametrize("snr_db", [None, 10.0], ids=["clean", "10-db"])
@pytest.mark.parametrize("keep", SHARES)
def test_out_of_domain_in_a_second_synthesiser_switches_nothing(
    snr_db: float | None, keep: tuple[int, ...]
) -> None:
    """At 10 dB the quiet flite voice (kal16) is 8 dB below the eSpeak wake word: the room
    is judged quiet from the wake word and proves loud over the command, which is then
    heard again denoised (before that, 4 of 40 became device actions)."""
    rows = _share(lines("out_of_domain.txt"), keep)
    rejected = 0
    actions = []
    for index, text in rows:
        events = _understand(_flite_scene(text, index, snr_db), continuous=False)
        rejected += all(not e.in_grammar for e in events if isinstance(e, Transcript))
        actions += [(text, e.intent) for e in intents(events) if e.intent in DEVICE_ACTION_INTENTS]
    assert actions == []
    if snr_db is None:
        assert rejected / len(rows) >= FLITE_REJECTION_FLOOR


@pytest.mark.usefixtures("need_flite")
@pytest.mark.parametrize("keep", SHARES)
def test_commands_in_a_loud_room_in_a_second_synthesiser_rarely_do_the_wrong_thing(
    keep: tuple[int, ...],
) -> None:
    """At 10 dB white noise the flite voices are mostly misheard (15 of 62 right): 11 of
    the 62 became a wrong device action before a device action had to come out the same
    heard raw and denoised (tests/test_second_hearing.py). That device actions still get
    through in a loud room is checked on the eSpeak set at 10 dB."""
    wrong = []
    for index, (text, intent, slots) in _share(commands(), keep):
        found = intents(_understand(_flite_scene(text, index, 10.0), continuous=False))
        for event in found:
            if event.intent not in DEVICE_ACTION_INTENTS:
                continue
            if event.intent != intent or any(event.slots.get(k) != v for k, v in slots.items()):
                wrong.append(f"{text!r} -> {event.intent} {event.slots} ({event.text!r})")
    assert len(wrong) <= FLITE_LOUD_WRONG_ACTIONS, wrong


def test_the_command_set() -> None:
    rows = commands()
    assert len(rows) >= 60
    assert {
        "CallForHelp",
        "GetTime",
        "GetDate",
        "Repeat",
        "Stop",
        "VolumeUp",
        "VolumeDown",
        "HassTurnOn",
        "HassTurnOff",
        "HassLightSet",
        "HassGetState",
        "HassStartTimer",
        "HassNevermind",
    } <= {intent for _, intent, _ in rows}
    assert len(lines("out_of_domain.txt")) >= 40


@pytest.mark.parametrize("keep", SHARES)
def test_intent_accuracy_clean_does_not_regress(keep: tuple[int, ...]) -> None:
    accuracy, wrong = _accuracy(None, keep)
    assert accuracy >= CLEAN_FLOOR, wrong


@pytest.mark.parametrize("keep", SHARES)
def test_intent_accuracy_at_10_db_does_not_regress(keep: tuple[int, ...]) -> None:
    accuracy, wrong = _accuracy(10.0, keep)
    assert accuracy >= NOISY_FLOOR, wrong


@pytest.mark.slow
@pytest.mark.xfail(reason=NOT_YET, strict=False)
def test_intent_accuracy_clean_target() -> None:
    accuracy, wrong = _accuracy(None, (0, 1, 2, 3, 4))
    assert accuracy >= CLEAN_ACCURACY, wrong


@pytest.mark.slow
@pytest.mark.xfail(reason=NOT_YET, strict=False)
def test_intent_accuracy_at_10_db_target() -> None:
    accuracy, wrong = _accuracy(10.0, (0, 1, 2, 3, 4))
    assert accuracy >= NOISY_ACCURACY, wrong


@pytest.mark.parametrize(
    ("wake", "snr_db"),
    [(False, None), (True, None), (True, 10.0)],
    ids=["continuous", "after-the-wake-word", "after-the-wake-word-at-10-db"],
)
@pytest.mark.parametrize("keep", SHARES)
def test_out_of_domain_is_rejected_and_switches_nothing(
    wake: bool, snr_db: float | None, keep: tuple[int, ...]
) -> None:
    """Heard after the wake word the recognizer starts from the wake word's cepstral
    mean and out-of-domain speech fits the grammar better than when heard cold: the
    word-level score keeps it out (before it, 4 of 40 were accepted, one as a device
    action)."""
    rows = _share(lines("out_of_domain.txt"), keep)
    rejected = 0
    actions = []
    for index, text in rows:
        events = _understand(_scene(text, index, snr_db, wake), continuous=not wake)
        transcripts = [e for e in events if isinstance(e, Transcript)]
        rejected += all(not t.in_grammar for t in transcripts)
        actions += [(text, e.intent) for e in intents(events) if e.intent in DEVICE_ACTION_INTENTS]
    assert actions == []
    assert rejected / len(rows) >= REJECTION


def test_noise_alone_gives_nothing() -> None:
    audio = synth.white_noise(10.0, 800.0, seed=4)
    events = _understand(audio)
    assert intents(events) == []


def test_bad_input_gives_a_clear_answer_not_an_exception() -> None:
    assert _understand(synth.silence(0.0)) == []
    assert intents(_understand(synth.silence(3.0))) == []
    clipped = np.clip(_scene("turn on the kitchen light", 0, None) * 40, -32768, 32767)
    for event in intents(_understand(clipped)):  # no other device may be switched
        assert event.intent not in DEVICE_ACTION_INTENTS - {"HassTurnOn"}
    babble = " ".join(["and then we walked along the river and talked about the old days"] * 18)
    long_speech = np.concatenate(
        [synth.silence(0.5), synth.espeak(babble, "en-us", 170), synth.silence(1.0)]
    )
    assert len(long_speech) / synth.RATE > 55
    events = _understand(long_speech)
    assert all(e.intent not in DEVICE_ACTION_INTENTS for e in intents(events))


def test_unknown_language_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        validate({"satellite": {"language": "english"}})
    config = dataclasses.replace(
        Config(), satellite=dataclasses.replace(Config().satellite, language="xx")
    )
    with pytest.raises(SatelliteError, match="language"):
        build_understanding(config, use_llm=False)
