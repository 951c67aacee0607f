"""Where the echo is against the reference (satellite/frontend/echo_drift.py): the
speaker's crystal against the microphone's, learnt over replies and stretched out of
the reference, and each reply's start matched to the run before, through a simulated
sound card (tests/sound_card.py)."""

from __future__ import annotations

import numpy as np
import pytest
import soxr

from satellite.frontend.echo import echo_return_loss_enhancement as erle
from satellite.frontend.echo_drift import (
    ALIGN_WINDOW,
    MIN_REFERENCE_POWER,
    Stretcher,
    fingerprint,
    offset,
)
from satellite.frontend.echo_engines import make_echo_canceller
from tests import synth
from tests.room import Float, Room, level_db, scale_to
from tests.sound_card import Crystals, ThroughTheCard

pytestmark = pytest.mark.usefixtures("need_espeak")
RATE = 16000
OUTPUT_HZ = 22050
TEXTS = (
    "The kitchen light is on. It is twenty past four, and the weather is fine today.",
    "Turned off the bedroom lamp. The timer for ten minutes has started.",
    "You have two reminders: take your tablets at six, and call your daughter after dinner.",
)


def _said(text: str) -> Float:
    said = synth.espeak(text, "en-us", 160).astype(np.float64)
    return scale_to(said, 20 * np.log10(3000))


@pytest.fixture(scope="module")
def replies() -> list[Float]:
    return [soxr.resample(_said(t) / 32768, RATE, OUTPUT_HZ) * 32768 for t in TEXTS]


def _replies(card: ThroughTheCard, replies: list[Float], count: int) -> list[tuple[float, ...]]:
    """``count`` replies 3 s apart (the first 600 s up, or 3 s after the card's last);
    the echo taken out of each over 1-2 s and from 2 s."""
    at, taken = max(600.0, card.heard_to / RATE + 3.0), []
    for n in range(count):
        reply = replies[n % len(replies)]
        echo, out = card.reply(reply, at)
        at += len(reply) / OUTPUT_HZ + 3.0
        spans = (slice(RATE, 2 * RATE), slice(2 * RATE, None))
        taken.append(tuple(erle(echo[s], out[s]) for s in spans))
    return taken


def test_the_stretcher_gives_the_samples_back_at_rate_1_and_stretches_them_at_another() -> None:
    said = np.round(_said("Good morning, the kitchen light is on.")).astype(np.int16)
    same = Stretcher()
    pieces = [same.stretch(said[i : i + 320], 0.0) for i in range(0, len(said), 320)]
    assert np.array_equal(np.concatenate([*pieces, same.start(0.0)]), said)
    rate = 100e-6
    longer = Stretcher()
    pieces = [longer.stretch(said[i : i + 320], rate) for i in range(0, len(said), 320)]
    got = np.concatenate([*pieces, longer.start(rate)]).astype(np.float64)
    want = soxr.resample(said.astype(np.float64), RATE, RATE * (1 + rate))
    middle = slice(1000, min(len(got), len(want)) - 1000)
    error = level_db(got[middle] - want[middle]) - level_db(want[middle])
    assert abs(len(got) - len(said) * (1 + rate)) <= 1
    assert error < -35, error


def test_a_windows_echo_is_found_by_the_rooms_fingerprint_or_not_at_all() -> None:
    """In a quarter second of a reply the highest peak of the cross-correlation is not
    always the echo's (in 5 of this reply's 20, among them its quiet ones). Matched whole
    against the fingerprint learnt on another second, each window of a reply's start
    finds the echo 7.3 samples later than it was learnt, or says it cannot: never
    elsewhere, with a person as loud as the echo talking over it or not."""
    reply = _said(TEXTS[0])
    echo = Room(delay_ms=6, rt60_seconds=0.4).echo(reply)
    learnt = fingerprint(echo[RATE : 2 * RATE], reply[RATE : 2 * RATE])
    spectrum = np.fft.rfft(echo)
    bins = np.arange(len(spectrum))
    moved = np.fft.irfft(spectrum * np.exp(-2j * np.pi * bins * 7.3 / len(echo)), len(echo))
    person = synth.espeak("turn on the hall light please", "en-us+f3", 150).astype(np.float64)
    for talking in (False, True):
        found = []
        for start in range(RATE // 2, len(echo) - ALIGN_WINDOW, 2000):
            window = slice(start, start + ALIGN_WINDOW)
            if np.mean(reply[window] ** 2) < MIN_REFERENCE_POWER:
                continue
            mic = moved[window].copy()
            if talking:
                mic += scale_to(person[:ALIGN_WINDOW], level_db(mic))[: len(mic)]
            match = offset(fingerprint(mic, reply[window]), learnt)
            found.append(None if match is None else match[0])
        sure = [where for where in found if where is not None]
        assert all(abs(where - 7.3) <= 0.3 for where in sure), found
        assert len(sure) >= (0.3 if talking else 0.8) * len(found), found


@pytest.mark.parametrize("ppm", [30.0, -50.0])
def test_two_cards_crystals_are_learnt_and_the_reply_taken_out_as_on_one(
    replies: list[Float], ppm: float
) -> None:
    """Speaker and microphone on two crystals ``ppm`` apart: within six replies the rate
    is learnt to 3 ppm, and the echo is taken out as on one card; not followed, the
    slide leaves far more of it."""
    room = Room(1, 0.3)
    card = ThroughTheCard(make_echo_canceller("speex"), OUTPUT_HZ, Crystals(mic_ppm=ppm), room)
    taken = _replies(card, replies, 9)
    assert card.stage.timing.rate * 1e6 == pytest.approx(ppm, abs=3)
    assert min(t[1] for t in taken[5:]) >= 30, taken
    fixed = ThroughTheCard(make_echo_canceller("speex"), OUTPUT_HZ, Crystals(mic_ppm=ppm), room)
    fixed.stage.timing.follow_rate = False
    assert max(t[1] for t in _replies(fixed, replies, 9)[5:]) < 26


def test_one_card_keeps_the_rate_at_1(replies: list[Float]) -> None:
    card = ThroughTheCard(
        make_echo_canceller("speex"), OUTPUT_HZ, Crystals(-100, -100, start_ms=2), Room(1, 0.3)
    )
    _replies(card, replies, 6)
    assert abs(card.stage.timing.rate) < 2e-6


def test_each_reply_is_moved_to_where_the_filter_learnt_the_echo(replies: list[Float]) -> None:
    """The card starts 0-2 ms after its first write, a different time each reply: the
    filter learnt on the replies before is off by up to 32 samples at each start.
    Matched to the run before, the rest of the reply is taken out as by a filter that
    never moved; placed by write times alone, the filter learns the room again."""
    crystals, room = Crystals(start_ms=2.0, seed=4), Room(1, 0.3)
    card = ThroughTheCard(make_echo_canceller("speex"), OUTPUT_HZ, crystals, room)
    moved = _replies(card, replies, 8)
    assert card.stage.timing.runs_moved >= 5
    assert np.mean([t[0] for t in moved[3:]]) >= 28, moved
    assert np.mean([t[1] for t in moved[3:]]) >= 30, moved
    still = ThroughTheCard(make_echo_canceller("speex"), OUTPUT_HZ, crystals, room)
    still.stage.timing.align = False
    placed = _replies(still, replies, 8)
    assert np.mean([t[0] for t in placed[3:]]) < 20, placed


def test_a_moved_speaker_is_learnt_afresh(replies: list[Float]) -> None:
    """The speaker moved (another room's paths, 2 ms further): the fingerprint matches no
    more, so it is learnt afresh, and replies are matched and taken out again."""
    card = ThroughTheCard(
        make_echo_canceller("speex"), OUTPUT_HZ, Crystals(start_ms=2.0, seed=6), Room(1, 0.3)
    )
    _replies(card, replies, 4)
    card.room = Room(3, 0.4, seed=9)
    timing = card.stage.timing
    _replies(card, replies, 4)
    moved, matched = timing.runs_moved, timing.windows_matched
    taken = _replies(card, replies, 4)
    assert timing.windows_matched > matched + 8
    assert timing.runs_moved >= moved + 3
    assert min(t[1] for t in taken) >= 30, taken
