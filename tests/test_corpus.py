"""The test corpus: every voice family speaks, rooms have the SNR they claim, audio is
cached by what made it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests import corpus, synth


def _snr_db(speech: synth.Float, mixed: synth.Float) -> float:
    noise = mixed - speech
    return float(20 * np.log10(synth.active_rms(speech) / synth.rms(noise)))


def test_every_family_of_the_ci_set_is_installed_and_speaks() -> None:
    for voice in corpus.VOICES_CI:
        assert voice.available, f"{voice.label}: run scripts/bootstrap.sh"
        audio = corpus.speak(voice, "turn on the kitchen light")
        assert 1.0 < len(audio) / synth.RATE < 4.0, voice.label
        assert synth.active_rms(audio) > 500.0, voice.label


def test_the_families_sound_different() -> None:
    """Not the same synthesiser three times: the clips' lengths and spectra differ."""
    clips = [corpus.speak(v, "set a timer for five minutes") for v in corpus.VOICES_CI]
    centroids = []
    for clip in clips:
        spectrum = np.abs(np.fft.rfft(clip))
        freqs = np.fft.rfftfreq(len(clip), 1.0 / synth.RATE)
        centroids.append(float((spectrum * freqs).sum() / spectrum.sum()))
    assert len({round(c, -1) for c in centroids}) == len(clips)


def test_speech_is_cached_by_what_made_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "CACHE", tmp_path)
    voice = corpus.VOICES_CI[1]
    first = corpus.speak(voice, "what time is it")
    assert len(list(tmp_path.glob("*.npy"))) == 1
    np.testing.assert_array_equal(corpus.speak(voice, "what time is it"), first)
    assert len(list(tmp_path.glob("*.npy"))) == 1
    corpus.speak(corpus.Voice(voice.family, voice.name, 1.2), "what time is it")
    assert len(list(tmp_path.glob("*.npy"))) == 2  # another rate is another clip


@pytest.mark.parametrize("room", [r for r in corpus.ROOMS_ALL if r.noisy], ids=lambda r: r.label)
def test_noisy_rooms_mix_at_their_snr(room: corpus.Room) -> None:
    speech = corpus.speak(corpus.VOICES_CI[0], "is the kitchen light on")
    mixed = corpus.in_room(speech, room, seed=5)
    assert _snr_db(speech, mixed) == pytest.approx(room.snr_db, abs=0.1)
    assert not np.array_equal(corpus.in_room(speech, room, seed=6), mixed)


def test_babble_and_tv_are_speech_like_not_stationary() -> None:
    """Their short-time level swings (words, notes) as white noise's does not."""
    n = 3 * synth.RATE

    def swing(noise: synth.Float) -> float:
        frames = np.square(noise[: n // 320 * 320].astype(np.float64)).reshape(-1, 320).mean(1)
        return float(np.std(10 * np.log10(frames + 1e-9)))

    white = swing(synth.white_noise(3.0, 1.0, seed=1))
    assert swing(corpus.babble(n, seed=1)) > 3 * white
    assert swing(corpus.people(n, seed=1)) > 3 * white
    assert swing(corpus.tv(n, seed=1)) > 3 * white


def test_reverb_keeps_the_level_and_smears_the_end() -> None:
    speech = corpus.speak(corpus.VOICES_CI[1], "stop")
    padded = np.concatenate([speech, synth.silence(0.3)])
    wet = corpus.in_room(padded, corpus.Room("reverb"))
    assert synth.active_rms(wet) == pytest.approx(synth.active_rms(padded), rel=0.01)
    tail = slice(len(speech) + 800, len(speech) + 1600)  # 50-100 ms after the speech
    assert synth.rms(wet[tail]) > 20 * max(synth.rms(padded[tail]), 1.0)


def test_a_room_without_an_snr_is_an_error_that_says_so() -> None:
    with pytest.raises(ValueError, match="needs an SNR"):
        corpus.in_room(synth.silence(0.1), corpus.Room("white"))
    with pytest.raises(ValueError, match="use one of"):
        corpus.in_room(synth.silence(0.1), corpus.Room("rain", 10.0))
