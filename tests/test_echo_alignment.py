"""The echo reference placed where a real sound card plays it (tests/sound_card.py): the
player's writes return in steps of the card's periods, the card plays what it is given
without a gap, and its crystal and the microphone's are not the system clock's."""

from __future__ import annotations

import numpy as np
import pytest
import soxr

from satellite.audio.chunk import AudioChunk
from satellite.audio.echo_tap import EchoTap
from satellite.audio.io import NullSink
from satellite.frontend.echo import CLOCK_WINDOW_SECONDS, EchoStage, MicClock
from satellite.frontend.echo import echo_return_loss_enhancement as erle
from satellite.frontend.echo_drift import HALF
from satellite.frontend.echo_engines import make_echo_canceller
from tests import synth
from tests.room import Float, Room, scale_to
from tests.sound_card import Crystals, SystemClock, ThroughTheCard, play

RATE = 16000
OUTPUT_HZ = 22050


@pytest.fixture(scope="module")
def reply() -> Float:
    text = "The kitchen light is on. It is twenty past four, and the weather is fine today."
    said = scale_to(synth.espeak(text, "en-us", 160).astype(np.float64), 20 * np.log10(3000))
    resampled: Float = soxr.resample(said / 32768, RATE, OUTPUT_HZ) * 32768
    return resampled


def _hear(clock: MicClock, system: SystemClock, crystals: Crystals, seconds: float) -> None:
    """The frame loop's frames up to ``seconds`` of the microphone (one in ten)."""
    for end in range(160, int(seconds * RATE), 1600):
        system.now = crystals.mic_time(end) + 0.001
        clock.heard(end / RATE)


@pytest.mark.parametrize("ppm", [-100.0, 100.0])
def test_the_mic_clock_follows_a_crystal_off_the_system_clock(ppm: float) -> None:
    """After an hour, a microphone 100 ppm slow has fallen 0.36 s behind the system
    clock: the sample it hears now is still found within 3 ms (the smallest offset ever
    seen would put it 0.36 s late)."""
    system, crystals = SystemClock(), Crystals(mic_ppm=ppm)
    clock = MicClock(system)
    _hear(clock, system, crystals, 3600.0)
    now = crystals.mic_time(3600 * RATE)
    found = clock.position(now)
    assert found is not None
    assert abs(found - 3600 * RATE) <= 0.003 * RATE, (found - 3600 * RATE) / RATE


def test_the_mic_clock_recovers_from_samples_lost_in_an_overrun() -> None:
    """A capture overrun loses 0.2 s: the microphone's count runs 0.2 s behind the
    system clock from then on. Within the clock's window it is followed again."""
    system, crystals = SystemClock(), Crystals()
    clock = MicClock(system)
    _hear(clock, system, crystals, 60.0)
    for end in range(60 * RATE, 120 * RATE, 160):  # counted 0.2 s short from here on
        system.now = end / RATE + 0.001
        clock.heard((end - int(0.2 * RATE)) / RATE)
        if end == 60 * RATE + 160:
            assert clock.position(system.now) == end  # the old offset: 0.2 s late, for now
    later = 120 * RATE - int(0.2 * RATE)
    assert clock.position(120.001) == pytest.approx(later, abs=16)
    assert CLOCK_WINDOW_SECONDS < 60


def test_the_cards_writes_return_in_steps_and_its_queue_plays_without_a_gap() -> None:
    """What the simulated card does: the first writes go into empty queues at once, then
    each returns when the ring frees a period, so returns come 7-30 ms apart although
    each write is 20 ms of audio."""
    playback = play([661] + [441] * 40, OUTPUT_HZ, 10.0, Crystals())
    gaps = np.diff(playback.returned[3:]) * 1000
    assert playback.device_start == 10.0
    assert playback.returned[1] == 10.0  # the queues took it at once
    assert gaps.min() < 16 and gaps.max() > 21
    assert np.mean(gaps) == pytest.approx(20, abs=0.5)


@pytest.mark.parametrize(
    ("crystals", "uptime"),
    [(Crystals(), 10.0), (Crystals(speaker_ppm=-100, mic_ppm=-100, seed=2), 3600.0)],
    ids=["just-started", "an-hour-on-a-slow-card"],
)
def test_the_reply_is_taken_out_of_a_real_cards_microphone(
    reply: Float, crystals: Crystals, uptime: float
) -> None:
    """The whole path: the player's writes through the tap as the card takes them, the
    microphone's frames as the loop gets them. Placed by each write's return, the
    reference had the reply in pieces 7-20 ms out of place (1-2 dB taken out); an hour
    on a card 100 ppm slow put it 0.36 s behind the echo (under 1 dB)."""
    card = ThroughTheCard(make_echo_canceller("speex"), OUTPUT_HZ, crystals, Room(1, 0.3))
    echo, out = card.reply(reply, uptime)
    assert erle(echo[2 * RATE :], out[2 * RATE :]) >= 25


def test_audio_written_after_the_card_ran_dry_starts_a_new_run() -> None:
    """A write that comes after the queued audio has played is placed where it is heard
    (its write time), not after the audio before it."""
    system = SystemClock()
    stage = EchoStage(make_echo_canceller("speex"), clock=MicClock(system))
    system.now = 5.0
    stage.clock.heard(5.0)
    piece = AudioChunk(RATE, 2, 1, np.ones(320, "<i2").tobytes(), 0.0)
    stage.played(piece, 5.0)
    stage.played(piece, 5.001)  # queued behind the first: right after it
    assert stage.reference.take(5 * RATE - 80, 640 - HALF).all()  # the end comes later
    stage.played(piece, 7.0)  # the card had played both long before
    assert stage.reference.take(5 * RATE - 80, 640).all()  # the end of the run before
    assert stage.reference.take(7 * RATE - 80, 320 - HALF).all()
    assert not stage.reference.take(5 * RATE + 560, 320).any()


def test_a_stop_that_flushes_the_card_starts_a_new_run() -> None:
    """The player's stop flushes the sink through the tap (before, the tap hid the
    sink's flush, so the queue played on): what was queued will not play, so the next
    reply is placed where it is written, not after the audio that was dropped."""
    flushed: list[int] = []

    class Queued(NullSink):
        def flush(self) -> int:
            flushed.append(1)
            return 640

    system = SystemClock()
    stage = EchoStage(make_echo_canceller("speex"), clock=MicClock(system))
    tap = EchoTap(Queued(), stage.played, clock=system, flushed=stage.flushed)
    system.now = 5.0
    stage.clock.heard(5.0)
    long_piece = AudioChunk(RATE, 2, 1, np.full(RATE, 2, "<i2").tobytes(), 0.0)
    tap.write(long_piece)  # a second queued from 5.0 s
    system.now = 5.1
    assert tap.flush() == 640 and flushed == [1]
    tap.write(AudioChunk(RATE, 2, 1, np.full(320, 3, "<i2").tobytes(), 0.0))
    assert (stage.reference.take(int(5.1 * RATE) - 80, 320 - HALF) == 3).all()
