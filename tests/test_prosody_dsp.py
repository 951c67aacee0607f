"""satellite.prosody.dsp against scipy.signal, which the satellite no longer imports.

scipy is a dev dependency: these tests import it, the satellite must not (checked in a
child process, since other tests load scipy into this one).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from scipy import fft as sp_fft
from scipy import signal

from satellite.prosody import acoustic, dsp
from tests import synth

Float = npt.NDArray[np.float64]
ROOT = Path(__file__).resolve().parent.parent
BANDS = (acoustic.NUCLEUS_BAND_HZ, acoustic.SPEECH_BAND_HZ)


def _butter(band: tuple[float, float]) -> Float:
    sos: Float = signal.butter(
        4, band, btype="bandpass", fs=acoustic.ANALYSIS_RATE_HZ, output="sos"
    )
    return sos


# --- band-passes ---------------------------------------------------------------------------


@pytest.mark.parametrize("band", BANDS)
def test_stored_sections_are_scipys_butterworth(band: tuple[float, float]) -> None:
    expected = _butter(band)
    rows = ",\n".join(f"    {tuple(float(v) for v in row)!r}" for row in expected)
    np.testing.assert_allclose(
        np.array(acoustic.BAND_SOS[band]),
        expected,
        rtol=1e-12,
        atol=1e-18,
        err_msg=f"BAND_SOS[{band}] in satellite/prosody/acoustic.py should be:\n{rows}",
    )


@pytest.mark.parametrize("band", BANDS)
def test_impulse_response_is_sosfilts_and_its_tail_is_negligible(band: tuple[float, float]) -> None:
    impulse = np.zeros(1 << 16)
    impulse[0] = 1.0
    reference = signal.sosfilt(_butter(band), impulse)
    ours = dsp.sos_impulse_response(acoustic.BAND_SOS[band], acoustic.IMPULSE_SAMPLES)
    assert len(ours) == acoustic.IMPULSE_SAMPLES
    np.testing.assert_allclose(ours, reference[: len(ours)], rtol=0, atol=1e-15)
    tail = float(np.sum(reference[acoustic.IMPULSE_SAMPLES :] ** 2))
    assert tail < 1e-24 * float(np.sum(reference**2))


def test_sections_need_a0_of_one() -> None:
    with pytest.raises(ValueError, match="a0"):
        dsp.sos_impulse_response([(1.0, 0.0, 0.0, 2.0, 0.0, 0.0)], 4)


def _test_signals() -> Iterator[tuple[str, Float]]:
    rng = np.random.default_rng(7)
    step = dsp.FirFilters([np.ones(acoustic.IMPULSE_SAMPLES)]).step
    for n in (0, 1, 5, 2047, step - 1, step, step + 1, 3 * step, 51_234):
        yield f"noise {n}", rng.standard_normal(n) * 0.3
    burst = np.zeros(40_000)
    burst[1000:9000] = np.sin(2 * np.pi * 440 * np.arange(8000) / 16000)
    yield "tone burst, then digital silence", burst
    yield "DC step", np.concatenate((np.zeros(100), np.ones(30_000)))
    yield "full scale square", np.sign(np.sin(2 * np.pi * 150 * np.arange(32_000) / 16000))


@pytest.mark.parametrize(("name", "x"), list(_test_signals()))
def test_band_passes_filter_as_sosfilt(name: str, x: Float) -> None:
    nucleus, speech = acoustic.band_passes(x, BANDS)
    if not len(x):  # scipy's sosfilt refuses empty input (the analysis never filters any)
        assert nucleus.shape == speech.shape == (0,)
        return
    scale = max(1.0, float(np.max(np.abs(x)))) if len(x) else 1.0
    for ours, band in ((nucleus, BANDS[0]), (speech, BANDS[1])):
        assert ours.shape == x.shape
        np.testing.assert_allclose(
            ours, signal.sosfilt(_butter(band), x), rtol=0, atol=1e-12 * scale, err_msg=name
        )


def test_fir_filters_are_causal_convolutions() -> None:
    rng = np.random.default_rng(3)
    responses = [rng.standard_normal(300), rng.standard_normal(17)]
    filters = dsp.FirFilters(responses, size=1024)
    for n in (0, 1, 724, 725, 726, 5000):
        x = rng.standard_normal(n)
        out = filters(x)
        assert out.shape == (2, n)
        for row, h in zip(out, responses, strict=True):
            expected = np.convolve(x, h)[:n] if n else x
            np.testing.assert_allclose(row, expected, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="too small"):
        dsp.FirFilters(responses, size=512)


# --- smoothing -----------------------------------------------------------------------------


def test_fast_size_is_scipys_next_fast_len() -> None:
    for n in [*range(1, 3000), 51_234, 65_537, 1_000_001]:
        assert dsp.fast_size(n) == sp_fft.next_fast_len(n, real=True), n


@pytest.mark.parametrize("length", [1, 2, 3, 24, 25, 800, 1920])
def test_gaussian_is_scipys(length: int) -> None:
    for std in (0.5, length / 5.0, 7.3):
        np.testing.assert_array_equal(
            dsp.gaussian(length, std), signal.windows.gaussian(length, std=std)
        )


def test_fftconvolve_same_is_scipys() -> None:
    rng = np.random.default_rng(11)
    for n, m in [(1, 1), (1, 5), (5, 1), (4, 6), (7, 6), (640, 1920), (2000, 400), (51_001, 960)]:
        a, b = rng.random(n), rng.random(m)
        expected = signal.fftconvolve(a, b, mode="same")
        ours = dsp.fftconvolve_same(a, b)
        assert ours.shape == expected.shape
        np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12 * m)
    assert dsp.fftconvolve_same(np.zeros(0), np.ones(3)).shape == (0,)


# --- peaks ---------------------------------------------------------------------------------


def _peak_signals() -> Iterator[Float]:
    """Random and tricky signals: ties, plateaus (at the edges too), equal peaks."""
    rng = np.random.default_rng(2024)
    for n in range(7):  # every short signal over three levels
        for code in range(3**n):
            yield np.array([(code // 3**i) % 3 for i in range(n)], dtype=np.float64)
    yield from (
        np.array(v, dtype=np.float64)
        for v in (
            [0, 2, 1, 2, 0],
            [0, 2, 2, 1, 2, 2, 0],
            [2, 2, 0, 1, 1, 1, 0, 2, 2],
            [0, 1, 1, 1, 1],
            [1, 1, 1, 1, 0],
            [5, 5, 5, 5],
            [0, 3, 1, 3, 1, 3, 0],
            [-np.inf, 0, -np.inf, 1, 1, -np.inf],
        )
    )
    for _ in range(150):
        n = int(rng.integers(3, 400))
        yield rng.standard_normal(n)
        yield rng.integers(0, 4, n).astype(np.float64)  # many plateaus and ties
        runs = rng.integers(1, 6, int(rng.integers(1, 80)))
        yield np.repeat(rng.integers(-3, 4, len(runs)), runs).astype(np.float64)
        yield np.cumsum(rng.standard_normal(n))  # a contour-like walk
        yield np.round(np.cumsum(rng.standard_normal(n)) * 2) / 2


def test_local_maxima_are_scipys() -> None:
    signals = list(_peak_signals())
    wrong = [x for x in signals if not _same(dsp.local_maxima(x), signal.find_peaks(x)[0])]
    assert not wrong, wrong[:3]
    assert len(signals) > 1500


def _same(ours: npt.NDArray[np.intp], expected: npt.NDArray[np.intp]) -> bool:
    return ours.dtype == expected.dtype and np.array_equal(ours, expected)


def test_prominences_are_scipys_exactly() -> None:
    wrong = []
    for x in _peak_signals():
        peaks = dsp.local_maxima(x)
        if len(peaks) and np.isfinite(x).all():
            ours, expected = dsp.prominences(x, peaks), signal.peak_prominences(x, peaks)[0]
            if not np.array_equal(ours, expected):
                wrong.append((x, ours, expected))
    assert not wrong, wrong[:3]


def test_find_peaks_picks_scipys_indices() -> None:
    rng = np.random.default_rng(5)
    wrong, compared, found = [], 0, 0
    for x in _peak_signals():
        finite = x[np.isfinite(x)]
        levels = np.unique(finite) if len(finite) else np.zeros(1)
        # thresholds between and exactly at the signal's values and prominences
        for height in (float(levels.min()) - 1.0, *(float(h) for h in rng.choice(levels, 2))):
            for prominence in (0.0, 1.0, 2.0, float(rng.uniform(0, 3))):
                expected = signal.find_peaks(x, height=height, prominence=prominence)[0]
                if not _same(dsp.find_peaks(x, height, prominence), expected):
                    wrong.append((x, height, prominence))
                compared += 1
                found += len(expected)
    assert not wrong, wrong[:3]
    assert compared > 15_000
    assert found > 15_000


# --- the whole analysis --------------------------------------------------------------------


def _syllables(seed: int) -> Float:
    """Voiced bursts (harmonics of 110-190 Hz) at 2-9 per second, in noise after a lead."""
    rng = np.random.default_rng(seed)
    rate = synth.RATE
    pieces = [np.zeros(int(0.5 * rate))]
    per_second = rng.uniform(2.0, 9.0)
    for _ in range(int(rng.integers(6, 20))):
        length = int(rate / per_second * rng.uniform(0.5, 0.9))
        t = np.arange(length) / rate
        f0 = rng.uniform(110, 190)
        voiced = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 25) if k * f0 < 4000)
        pieces.append(3000.0 * np.hanning(length) * voiced)
        pieces.append(np.zeros(int(rate / per_second) - length))
    pieces.append(np.zeros(int(0.4 * rate)))
    audio = np.concatenate(pieces)
    return audio + rng.standard_normal(len(audio)) * 30.0


def _with_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis as it was: scipy's functions in place of satellite.prosody.dsp's (but the
    Gaussian windows, cached, and the same as scipy's to the bit: see above)."""

    def bands(x: Float, chosen: tuple[tuple[float, float], ...]) -> Float:
        return np.stack([signal.sosfilt(_butter(band), x) for band in chosen])

    def peaks(x: Float, height: float, prominence: float) -> npt.NDArray[np.intp]:
        found: npt.NDArray[np.intp] = signal.find_peaks(x, height=height, prominence=prominence)[0]
        return found

    same: Callable[[Float, Float], Float] = functools.partial(signal.fftconvolve, mode="same")
    monkeypatch.setattr(acoustic, "band_passes", bands)
    monkeypatch.setattr(dsp, "fftconvolve_same", same)
    monkeypatch.setattr(dsp, "find_peaks", peaks)


def test_analysis_is_what_it_was_with_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    utterances = [synth.to_chunk(_syllables(seed).astype(np.float32)) for seed in range(12)]
    if synth.have_espeak():
        utterances += [
            synth.to_chunk(np.concatenate((synth.silence(0.5), synth.espeak(text, "en-us", wpm))))
            for text, wpm in (("What is the date today?", 110), ("Switch on the lamp.", 300))
        ]
    ours = [acoustic.analyse_chunk(u) for u in utterances]
    with monkeypatch.context() as patched:
        _with_scipy(patched)
        theirs = [acoustic.analyse_chunk(u) for u in utterances]
    assert sum(a.nuclei for a in ours) > 5 * len(utterances)
    for a, b in zip(ours, theirs, strict=True):
        assert dataclasses.astuple(a) == dataclasses.astuple(b)


def test_the_satellite_runs_without_scipy() -> None:
    # satellite.cli: all that `pocket-satellite` imports, its run command's included
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import satellite.cli, satellite.understanding, satellite.prosody.acoustic as a\n"
        "rng = np.random.default_rng(0)\n"
        "t = np.arange(48000) / 16000\n"
        "x = 0.3 * np.sin(2 * np.pi * 150 * t) * (np.sin(2 * np.pi * 4 * t) > 0)\n"
        "print(a.analyse(x + 0.001 * rng.standard_normal(len(x))).nuclei)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert int(out[0]) > 5
    assert out[1] == "[]"
