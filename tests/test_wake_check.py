"""The wake word's band check (frontend.wake.checked_above): a detection below the
model's cutoff is taken only when PocketSphinx hears "okay nabu" before it. Real model,
real decoder, speech made at test time (tests/corpus.py)."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.audio.chunk import FRAME_SAMPLES
from satellite.config import Config, validate
from satellite.config_base import ConfigError
from satellite.events import Event, UtteranceEnded, WakeDetected
from satellite.frontend.noise import make_noise_suppressor
from satellite.frontend.wake import MicroWakeWordDetector
from satellite.frontend.wake_check import STEP_FRAMES, WINDOW_SECONDS, make_band_check
from satellite.pipeline import build_pipeline
from tests import corpus, robustness, synth
from tests.understand import commands

#: The model's own cutoff for okay_nabu.
MODEL_CUTOFF = 0.85
#: Scenes the model alone misses (its peak is below its cutoff) and the check confirms:
#: voice, room, the command (every 4th of tests/data), the scene's seed.
BAND_SCENES = [
    ("cmu_us_slt_arctic_hts", corpus.Room("white", 10.0), 2),
    ("kal16", corpus.Room("babble", 10.0), 13),
]
#: Reading with no wake word in it where the model peaks in the band (rms, clean).
NOT_THE_PHRASE = (
    "the weather is lovely today",
    "my grandson is coming to visit on sunday",
    "i would like a cup of tea with milk",
)


def _scene(name: str, room: corpus.Room, index: int) -> robustness.Scene:
    text = [t for t, _, _ in commands()][::4][index]
    return robustness.scene(corpus.installed(name), text, room, index)


def _config(checked_above: float | None) -> Config:
    return validate({"frontend": {"wake": {"checked_above": checked_above}}})


def _run(audio: synth.Float, config: Config) -> list[Event]:
    events: list[Event] = []
    pipeline = build_pipeline(config)
    for chunk in synth.mic_chunks(audio, 0.01):
        events += pipeline.process(chunk)
    # in babble the room is speech to the VAD: what is still heard ends with the audio
    return events + pipeline.end_of_input()


@pytest.mark.parametrize(("voice", "room", "index"), BAND_SCENES)
def test_okay_nabu_in_noise_below_the_cutoff_is_taken(
    voice: str, room: corpus.Room, index: int
) -> None:
    """The default configuration wakes where the model alone does not, and the command
    after the wake word is still cut out whole although the check decides later."""
    scene = _scene(voice, room, index)
    assert not robustness.wake_hits(scene.audio, "webrtc2"), "the model alone wakes here"
    events = _run(scene.audio, Config())
    wakes = [e for e in events if isinstance(e, WakeDetected)]
    assert len(wakes) == 1
    floor = Config().frontend.wake.checked_above
    assert floor is not None
    assert floor < wakes[0].probability < MODEL_CUTOFF
    command_start = scene.command_start / synth.RATE
    assert wakes[0].timestamp_seconds < command_start
    utterances = [e for e in events if isinstance(e, UtteranceEnded)]
    assert utterances, "nothing was heard after the wake word"
    heard = utterances[0]
    assert heard.start_seconds <= command_start + 0.15
    assert heard.end_seconds >= scene.command_end / synth.RATE - 0.15


def test_the_check_is_spread_over_frames() -> None:
    """The check runs a step per frame: the confirmed detection comes out frames after
    its peak (the time it reports), each step searching ``STEP_FRAMES`` of the window."""
    scene = _scene(*BAND_SCENES[0])
    band = make_band_check(0.2, ("okay_nabu",))
    detector = MicroWakeWordDetector(("okay_nabu",), None, 2.0, band)
    emitted: list[tuple[float, float]] = []
    frames = synth.mic_chunks(scene.audio, 0.01)
    noise = make_noise_suppressor("webrtc", 0, 2)
    for frame in frames:
        if frame.num_frames < FRAME_SAMPLES:
            break  # the audio's last few samples
        hit = detector.process(noise.process(frame))
        if hit is not None:
            assert hit.checked
            emitted.append((frame.end_seconds, hit.timestamp_seconds))
    assert len(emitted) == 1
    at, peak = emitted[0]
    window_steps = WINDOW_SECONDS * 100 / STEP_FRAMES
    assert at - peak >= window_steps * 0.01  # at least one search's steps, a frame each
    assert at - peak < 0.5  # the recorder keeps 0.85 s before the frame it is given


def test_speech_that_is_not_the_phrase_is_rejected() -> None:
    """Reading in which the model peaks in the band: the check runs and rejects it."""
    voice = corpus.installed("rms")
    audio = np.concatenate(
        [np.concatenate([corpus.speak(voice, s), synth.silence(0.15)]) for s in NOT_THE_PHRASE]
    )
    band = make_band_check(0.2, ("okay_nabu",))
    assert band is not None
    assert robustness.wake_hits(audio, "webrtc2", band=band) == []
    assert len(band.checked) == 1
    peak, score = band.checked[0]
    assert 0.2 < peak.probability < MODEL_CUTOFF
    assert not band.check.confirms(score)


@pytest.mark.parametrize("off", [0, 0.0, None])
def test_off_is_the_cutoff_alone(off: float | None) -> None:
    """With the option off nothing is checked: the scene the band check wakes on stays
    asleep, and a clean scene wakes exactly as the model alone wakes."""
    assert make_band_check(off, ("okay_nabu",)) is None
    config = _config(off)
    band_scene = _scene(*BAND_SCENES[0])
    assert not [e for e in _run(band_scene.audio, config) if isinstance(e, WakeDetected)]
    clean = _scene(BAND_SCENES[0][0], corpus.Room("clean"), 2)
    alone = robustness.wake_hits(clean.audio, "webrtc2")
    wakes = [e for e in _run(clean.audio, config) if isinstance(e, WakeDetected)]
    assert [(w.timestamp_seconds, round(w.probability, 4)) for w in wakes] == [
        (round(h.timestamp_seconds, 3), round(h.probability, 4)) for h in alone
    ]


def test_no_check_for_a_wake_word_it_does_not_know() -> None:
    assert make_band_check(0.2, ("hey_jarvis",)) is None


@pytest.mark.parametrize(
    ("wake", "says"),
    [
        ({"checked_above": "half"}, "frontend.wake.checked_above: expected a number"),
        ({"checked_above": True}, "frontend.wake.checked_above: expected a number"),
        ({"checked_above": 0.99}, "frontend.wake.checked_above: 0.99 is out of range"),
        ({"checked_above": 0.01}, "frontend.wake.checked_above: 0.01 is too low"),
        (
            {"checked_above": 0.6, "probability_cutoff": 0.5},
            "frontend.wake.checked_above: 0.6 is not below probability_cutoff (0.5)",
        ),
    ],
)
def test_a_bad_value_is_one_clear_config_error(wake: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        validate({"frontend": {"wake": wake}})
    problems = caught.value.problems
    assert len(problems) == 1
    assert problems[0].startswith(says)
    assert "Fix:" in problems[0]
