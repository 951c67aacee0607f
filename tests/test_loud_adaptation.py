"""A loud room heard with the acoustic model adapted to speech in noise
(``stt.loud_adaptation``, the shipped ``satellite/data/loud_mllr_matrix``, made by
bench/loud_adaptation.py), a quiet room with the model as shipped."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk, join_frames
from satellite.config import Config, ConfigError, validate
from satellite.errors import SatelliteError
from satellite.frontend.noise import SpeexNoiseSuppressor
from satellite.stt import sphinx_decoders
from satellite.stt.base import SttResult
from satellite.stt.factory import configured_intent_set, make_recognizer
from satellite.stt.sphinx import PocketSphinxRecognizer
from satellite.stt.sphinx_decoders import loud_mllr
from tests import corpus, robustness, synth


def _config(adapted: bool) -> Config:
    base = Config()
    return dataclasses.replace(base, stt=dataclasses.replace(base.stt, loud_adaptation=adapted))


@cache
def _recognizer(adapted: bool) -> PocketSphinxRecognizer:
    config = _config(adapted)
    made = make_recognizer(config.stt, "en", configured_intent_set(config.nlu, "en", None))
    assert isinstance(made, PocketSphinxRecognizer)
    return made


def _frames(audio: synth.Float) -> list[AudioChunk]:
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    return [
        AudioChunk.from_int16(samples[at : at + FRAME_SAMPLES], timestamp_seconds=at / synth.RATE)
        for at in range(0, len(samples) - FRAME_SAMPLES + 1, FRAME_SAMPLES)
    ]


def _heard(recognizer: PocketSphinxRecognizer, loud: bool, frames: list[AudioChunk]) -> SttResult:
    """The streaming search's result, from the utterance's own mean (not the one the
    search before left)."""
    recognizer.hear_room(loud)
    recognizer.start(frames[0].timestamp_seconds, join_frames(frames))
    for frame in frames:
        recognizer.process(frame)
    return recognizer.finish()


@pytest.fixture(scope="module")
def noisy_command() -> list[AudioChunk]:
    voice = corpus.VOICES_CI[1]
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed: run scripts/bootstrap.sh")
    room = corpus.Room("white", 10.0)
    said = _frames(robustness.scene(voice, "turn on the kitchen light", room, 3, wake=False).audio)
    suppressor = SpeexNoiseSuppressor(Config().frontend.noise.suppression_db)
    return [suppressor.process(frame) for frame in said]  # as the recognizer hears it


def test_the_option_is_on_by_default_and_checked() -> None:
    assert Config().stt.loud_adaptation is True
    assert validate({"stt": {"loud_adaptation": False}}).stt.loud_adaptation is False
    with pytest.raises(ConfigError, match="loud_adaptation"):
        validate({"stt": {"loud_adaptation": "sometimes"}})


def test_the_shipped_adaptation_is_one_mean_transform_per_feature_stream() -> None:
    numbers = loud_mllr().read_text("utf-8").split()
    classes, streams = int(numbers[0]), int(numbers[1])
    assert (classes, streams) == (1, 3)
    sizes = []
    at = 2
    for _ in range(streams):  # a size, its matrix, its bias, its variance scale
        size = int(numbers[at])
        sizes.append(size)
        at += 1 + size * size + 2 * size
    assert sizes == [13, 13, 13] and at == len(numbers)
    matrix = np.array([float(n) for n in numbers[3 : 3 + 13 * 13]]).reshape(13, 13)
    assert not np.allclose(matrix, np.eye(13))  # it moves the model


def test_a_loud_room_is_heard_with_the_adapted_model(noisy_command: list[AudioChunk]) -> None:
    adapted = _recognizer(True)
    assert adapted.adapted_to_loud
    quiet = _heard(adapted, False, noisy_command)
    loud = _heard(adapted, True, noisy_command)
    assert loud.score_per_frame is not None and quiet.score_per_frame is not None
    assert loud.score_per_frame != pytest.approx(quiet.score_per_frame, abs=1e-3)
    # and back: a quiet room is heard exactly as before
    assert _heard(adapted, False, noisy_command) == quiet


def test_the_second_opinion_keeps_the_model_as_shipped(noisy_command: list[AudioChunk]) -> None:
    """In a loud room the utterance heard the other way is searched by the model as
    shipped: another model's opinion errs less often the same way."""
    adapted, plain = _recognizer(True), _recognizer(False)
    for loud in (True, False):
        adapted.hear_room(loud)
        assert adapted.search_whole(noisy_command) == plain.search_whole(noisy_command)


def test_a_quiet_room_is_heard_as_without_the_adaptation(
    noisy_command: list[AudioChunk],
) -> None:
    plain = _recognizer(False)
    assert not plain.adapted_to_loud
    as_shipped = _heard(plain, False, noisy_command)
    assert _heard(_recognizer(True), False, noisy_command) == as_shipped
    # without the option a loud room is heard with the model as shipped
    assert _heard(plain, True, noisy_command) == as_shipped


def test_a_missing_adaptation_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sphinx_decoders, "LOUD_MLLR", "data/no_such_matrix")
    with pytest.raises(SatelliteError, match=r"stt\.loud_adaptation: false"):
        loud_mllr()
