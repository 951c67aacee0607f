"""What the canceller leaves of the satellite's own voice, predicted from what it played
(satellite/frontend/echo_ringing.py), and the talk-over check that uses it (issue 19).

Synthetic 10 ms frames: a reply's reference power with pauses, and a canceller's output
that is the room ringing on past its filter (a decaying sum of what was played, which
the double-talk gate's prediction from the microphone does not follow), plus a floor.
"""

from __future__ import annotations

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.frontend.echo_ringing import TAPS, ResidualModel
from satellite.frontend.echo_talk_over import RINGING_MARGIN_DB, WINDOW_FRAMES, TalkOver
from satellite.stt.keywords import DoubleTalkGate, power

RATE = 16_000
FRAME = 160
FLOOR = 100.0  # the output's noise floor, power
#: The room's ringing as the output holds it: what was played k frames ago, decaying
#: 1 dB per frame (RT60 0.6 s), from 5 frames on (the filter took out the early part).
RING = np.array([0.0] * 5 + [0.02 * 10 ** (-k / 10) for k in range(TAPS - 5)])


def _reply_powers(frames: int, seed: int) -> np.ndarray:
    """A reply's reference power: syllables of 60-200 ms with pauses of 50-400 ms."""
    rng = np.random.default_rng(seed)
    out = np.ones(frames)
    at = 0
    while at < frames:
        length = int(rng.integers(6, 20))
        out[at : at + length] = 10 ** rng.uniform(6.5, 7.5)
        at += length + int(rng.integers(5, 40))
    return out


def _outputs(reference: np.ndarray) -> np.ndarray:
    played = np.maximum(reference - 1.0, 0.0)
    return np.convolve(played, RING)[: len(reference)] + FLOOR


def _play(
    model: ResidualModel, reference: np.ndarray, person: np.ndarray | None = None
) -> list[float | None]:
    heard = _outputs(reference) + (0.0 if person is None else person)
    measured: list[float | None] = []
    for ref, out in zip(reference, heard, strict=True):
        model.add(float(ref), float(out), learn=True)
        measured.append(model.excess_db())
    return measured


def test_nothing_is_predicted_before_a_reply_played_alone_was_learnt() -> None:
    model = ResidualModel(WINDOW_FRAMES)
    assert all(m is None for m in _play(model, _reply_powers(400, 1)))
    model.start_reply()  # someone spoke over it: dropped
    model.end_reply()
    assert model.weights is None
    _play(model, _reply_powers(400, 2))
    model.end_reply()
    assert model.weights is not None and (model.weights >= 0).all()


def test_the_satellites_own_ringing_stays_under_the_margin_a_person_passes() -> None:
    model = ResidualModel(WINDOW_FRAMES)
    for seed in range(3):  # replies played alone
        model.start_reply()
        _play(model, _reply_powers(500, seed))
        model.end_reply()
    model.start_reply()
    own = [m for m in _play(model, _reply_powers(500, 7)) if m is not None]
    assert own and max(own) < 3.0  # its ringing is predicted: what the gate's prediction missed
    model.start_reply()
    reference = _reply_powers(500, 8)
    person = np.zeros(500)
    person[250:] = np.mean(_outputs(reference)) * 10  # 10 dB over the residual's mean
    measured = _play(model, reference, person)
    onset = next(
        i for i, m in enumerate(measured) if i >= 250 and m is not None and m >= RINGING_MARGIN_DB
    )
    assert onset - 250 <= 15  # within 150 ms of the person's onset
    assert all(m < RINGING_MARGIN_DB for m in measured[:250] if m is not None)


def test_a_new_room_forgets_the_prediction() -> None:
    model = ResidualModel(WINDOW_FRAMES)
    _play(model, _reply_powers(400, 3))
    model.end_reply()
    model.forget()
    assert model.weights is None
    assert all(m is None for m in _play(model, _reply_powers(300, 4)))


def _chunk(power_value: float, at: int) -> AudioChunk:
    samples = np.full(FRAME, np.sqrt(power_value), dtype=np.float64)
    samples[1::2] *= -1  # the power holds, whatever its sign
    data = np.clip(np.round(samples), -32768, 32767).astype("<i2").tobytes()
    return AudioChunk(RATE, 2, 1, data, at * FRAME / RATE)


def _talk_over_reply(
    talk_over: TalkOver, reference: np.ndarray, person: np.ndarray | None = None
) -> float | None:
    """A reply through the check, the VAD calling every frame speech (the cancelled
    audio of a ringing room sounds like speech to it): the onset it heard, s."""
    residual = _outputs(reference)
    near = np.zeros(len(reference)) if person is None else person
    talk_over.start_reply()
    for index, (ref, left, said) in enumerate(zip(reference, residual, near, strict=True)):
        cancelled = _chunk(float(left + said), index)
        mic = _chunk(float(left) * 100 + float(said), index)  # 20 dB of echo taken out
        talk_over.gate.add(mic.samples, cancelled.samples)
        talk_over.played(float(ref), cancelled, learn=True)
        onset = talk_over.hear(cancelled.timestamp_seconds, 0.9)
        if onset is not None:
            return onset
    talk_over.end_reply()
    return None


def test_speech_over_a_ringing_reply_passes_on_the_predicted_residual_alone() -> None:
    """The gate's margin set out of reach (30 dB): only the new measure can pass."""
    talk_over = TalkOver(DoubleTalkGate(), threshold=0.5, margin_db=30.0)
    for seed in range(3):
        assert _talk_over_reply(talk_over, _reply_powers(500, seed)) is None
    assert talk_over.residual.weights is not None
    assert talk_over.ringing_margin.now_db == pytest.approx(RINGING_MARGIN_DB)
    reference = _reply_powers(500, 9)
    person = np.zeros(500)
    person[300:] = np.mean(_outputs(reference)) * 10
    onset = _talk_over_reply(talk_over, reference, person)
    assert onset is not None


def test_a_reply_spoken_over_is_not_learnt_by_the_prediction() -> None:
    talk_over = TalkOver(DoubleTalkGate(), threshold=0.5, margin_db=30.0)
    _talk_over_reply(talk_over, _reply_powers(500, 0))
    learnt = talk_over.residual.weights
    assert learnt is not None
    reference = _reply_powers(500, 5)
    person = np.zeros(500)
    person[200:] = np.mean(_outputs(reference)) * 10
    assert _talk_over_reply(talk_over, reference, person) is not None
    talk_over.end_reply()  # the app: the reply was paused, then stopped
    assert talk_over.residual.weights is learnt


def test_power_of_nothing_is_one() -> None:
    assert power(b"") == 1.0
    assert power(np.zeros(FRAME, np.int16)) == 1.0
    assert power(np.full(FRAME, 10, np.int16)) == pytest.approx(101.0)
