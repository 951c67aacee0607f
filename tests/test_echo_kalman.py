"""Our echo canceller (``engine: mdf``) learning with a frequency-domain Kalman filter
(``mdf_adaptation: kalman``, satellite/frontend/echo_kalman.py) on the simulated room
(tests/room.py, noise 30 dB below the reply): a new room's echo is out sooner than with
the NLMS step, a person talking over the very first reply does not spoil the filter, and
a moved speaker is learnt again."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.config import ConfigError, validate
from satellite.frontend.echo import EchoStage
from satellite.frontend.echo_kalman import KalmanAdaptation
from satellite.frontend.echo_mdf import MdfEchoCanceller
from satellite.stages import build_stages
from tests import synth
from tests.room import Float, Room, Speaking, level_db, scale_to

pytestmark = pytest.mark.usefixtures("need_espeak")
RATE = 16000
TEXTS = (
    "Turned off the bedroom lamp. The timer for ten minutes has started.",
    "The kitchen light is on. It is twenty past four, and the weather is fine today.",
)


@pytest.fixture(scope="module")
def replies() -> list[Float]:
    """Two of the satellite's replies (eSpeak NG)."""
    level = 20 * np.log10(3000.0)
    return [scale_to(synth.espeak(t, "en-us", 160).astype(np.float64), level) for t in TEXTS]


@pytest.fixture(scope="module")
def person(replies: list[Float]) -> Float:
    """A person's command, 6 dB below the reply's echo."""
    said = synth.espeak("turn on the kitchen light please", "en-us+f3", 150).astype(np.float64)
    return scale_to(said, level_db(replies[1]) - 6)


def _second_after_one_second_of_echo(adaptation: str, room: Room, reply: Float) -> float:
    canceller = MdfEchoCanceller(adaptation=adaptation)
    said = Speaking(room, canceller.process, late=0).reply(reply)
    onset = int(room.delay_ms * RATE / 1000)
    return said.echo_taken_out_db(slice(onset + RATE, onset + 2 * RATE))


def test_a_new_filter_takes_the_echo_out_sooner_than_with_nlms(replies: list[Float]) -> None:
    """A new filter at RT60 0.2 s, the second after 1 s of echo: 19.2 dB measured with
    the Kalman gain, 14.0 with the NLMS step (both learning again from remembered frames
    while young). The issue's 25 dB is not reached there (README)."""
    room = Room(20, 0.2)
    kalman = _second_after_one_second_of_echo("kalman", room, replies[1])
    nlms = _second_after_one_second_of_echo("nlms", room, replies[1])
    assert kalman >= 18.0, kalman
    assert kalman >= nlms + 3.0, (kalman, nlms)


def test_a_person_talking_over_the_first_reply_does_not_spoil_the_filter(
    replies: list[Float], person: Float
) -> None:
    """A new filter, a person talking from 1 s into its first reply (too young for the
    double-talk detector to tell): the Kalman gain shrinks by itself where the person
    is loud, so the next reply's first second has most of the echo out (24.2 dB
    measured; 15.9 with the NLMS step, whose filter took in the person). On a 400 ms
    tail, mdf's default when this was measured: on its 600 ms default the NLMS step
    leaves 21.4 dB here, the Kalman gain 25.1."""
    room = Room(20, 0.2)
    left = {}
    for adaptation in ("kalman", "nlms"):
        canceller = MdfEchoCanceller(tail_ms=400, adaptation=adaptation)
        speaking = Speaking(room, canceller.process, late=0)
        speaking.reply(replies[1], person, at=RATE)
        after = speaking.reply(replies[0])
        left[adaptation] = after.echo_taken_out_db(slice(0, RATE))
    assert left["kalman"] >= 22.0, left
    assert left["kalman"] >= left["nlms"] + 6.0, left


def test_a_moved_speaker_is_learnt_again(replies: list[Float]) -> None:
    """A filter learnt in one room, then the speaker moved: the output is never louder
    than the microphone (second by second), the filter starts again (uncertain, young),
    and the second reply in the new room has the echo out after its first second."""
    canceller = MdfEchoCanceller(adaptation="kalman")
    before = Speaking(Room(100, 0.4), canceller.process, late=0)
    for reply in replies:
        before.reply(reply)
    assert not canceller.young
    moved = Speaking(Room(60, 0.3, seed=5), canceller.process, late=0)
    for index, reply in enumerate(replies):
        said = moved.reply(reply)
        for start in range(0, len(said.mic) - RATE + 1, RATE):
            second = slice(start, start + RATE)
            louder = level_db(said.cancelled[second]) - level_db(said.mic[second])
            assert louder <= 0.5, (index, start / RATE, louder)
    assert said.echo_taken_out_db(slice(RATE, len(said.mic))) >= 22.0


class _Muted(Room):
    """A room whose speaker is muted: the microphone hears none of the reply."""

    def echo(self, played: Float) -> Float:
        return np.zeros(len(played))


def test_after_a_muted_speaker_the_room_is_still_learnt(replies: list[Float]) -> None:
    """Two replies played into a muted speaker (11 s) make the Kalman filter sure the
    room has no echo; a filter that takes out little is kept uncertain, so once the
    speaker is heard the first reply's last second has 15 dB out (24.2 measured; 0.0
    without it, and nothing learnt) and the next reply 25 dB after its first second
    (30.8; with the NLMS step 18.4 and 23.7)."""
    canceller = MdfEchoCanceller(adaptation="kalman")
    muted = Speaking(_Muted(20, 0.2), canceller.process, late=0)
    for reply in replies:
        muted.reply(reply)
    heard = Speaking(Room(20, 0.2), canceller.process, late=0)
    first = heard.reply(replies[1])
    end = len(replies[1])
    assert first.echo_taken_out_db(slice(end - RATE, end)) >= 15.0
    second = heard.reply(replies[0])
    assert second.echo_taken_out_db(slice(RATE, len(replies[0]))) >= 25.0


def test_a_loud_near_end_shrinks_the_step() -> None:
    """The same far end and the same error from the filter, once with a quiet near end
    and once after frames with a loud one (a person): the step is far smaller then; and
    a weight the far end has excited grows less uncertain."""
    rng = np.random.default_rng(1)
    partitions, bins = 4, 161
    spectra = rng.standard_normal((partitions, bins)) + 1j * rng.standard_normal((partitions, bins))
    spectra *= 3000.0 * np.sqrt(160)
    power = spectra.real**2 + spectra.imag**2
    weights = np.zeros((partitions, bins), np.complex128)
    error = 0.1 * spectra[0]
    steps = []
    for person_db in (None, 20.0):
        kalman = KalmanAdaptation(partitions, bins)
        if person_db is not None:
            loud = error * 10 ** (person_db / 20)
            for _ in range(20):
                kalman.gradient(loud, spectra, power, weights)
        before = kalman.uncertainty.copy()
        steps.append(float(np.mean(np.abs(kalman.gradient(error, spectra, power, weights)))))
        assert np.all(kalman.uncertainty < before)
    assert steps[1] < steps[0] / 5, steps


def test_the_config_picks_how_mdf_learns() -> None:
    stages = build_stages(validate({"frontend": {"echo": {"enabled": True, "engine": "mdf"}}}))
    assert isinstance(stages.echo, EchoStage)
    assert isinstance(stages.echo.canceller, MdfEchoCanceller)
    assert stages.echo.canceller.adaptation == "nlms"  # the default (README: words)
    kalman = {"enabled": True, "engine": "mdf", "mdf_adaptation": "kalman"}
    echo = build_stages(validate({"frontend": {"echo": kalman}})).echo
    assert echo is not None and isinstance(echo.canceller, MdfEchoCanceller)
    assert echo.canceller.adaptation == "kalman"
    with pytest.raises(ConfigError) as info:
        validate({"frontend": {"echo": {"mdf_adaptation": "rls"}}})
    (problem,) = info.value.problems
    assert problem.startswith("frontend.echo.mdf_adaptation") and "Fix:" in problem, problem
