"""Syllable nuclei from the sound alone (no speech recognition), numpy only.

The recipe follows de Jong & Wempe (2009): an intensity contour (10 ms hop), peaks that
stand out from the dips on both sides (*prominence*), above a loudness floor,
kept only where the signal is voiced (normalised autocorrelation at a pitch lag). Three
changes, each measured on synthetic speech with known syllables (see bench/prosody.py):

* The contour is the energy of the 300-900 Hz band (where vowels' first formant lives)
  rather than of the whole signal: fricatives and bursts do not make peaks there.
* The smoothing window follows the speech: a first pass with a 25 ms window gives a
  rough syllable rate, and the second pass uses a window scaled to that rate (12-60 ms).
  A fixed window merges syllables of fast speech and splits long vowels of slow speech,
  which compresses the rate range (a fixed 50-64 ms window turns a 1.5x change into
  ~1.25x); the adaptive one keeps most of it.
* Speech start, end and pauses come from the whole-band (100-4000 Hz) contour with a
  fixed 25 ms window; a pause is a quiet run of at least 150 ms.

The count is raw: :mod:`satellite.prosody.rate` applies the calibration. The signal
processing is scipy's, redone in numpy by :mod:`satellite.prosody.dsp` (importing scipy
would cost the satellite ~70 MB and ~1 s of start-up).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..audio.chunk import AudioChunk, resample, to_float_mono
from . import dsp

_LOGGER = logging.getLogger(__name__)

Float = npt.NDArray[np.float64]

#: Analysis sample rate, Hz (other rates are resampled).
ANALYSIS_RATE_HZ = 16000
#: Contour hop, s.
HOP_SECONDS = 0.01
_HOP = int(ANALYSIS_RATE_HZ * HOP_SECONDS)
#: Band whose energy peaks at vowels, Hz.
NUCLEUS_BAND_HZ = (300.0, 900.0)
#: Band for speech start, end and pauses, Hz.
SPEECH_BAND_HZ = (100.0, 4000.0)
#: The two band-passes: 4th-order Butterworth as second-order sections, i.e.
#: ``scipy.signal.butter(4, band, btype="bandpass", fs=ANALYSIS_RATE_HZ, output="sos")``
#: (tests/test_prosody_dsp.py checks them against scipy, and prints them anew if a band
#: changes).
BAND_SOS: dict[tuple[float, float], tuple[dsp.Section, ...]] = {
    NUCLEUS_BAND_HZ: (
        (
            0.00014412022407538335,
            0.0002882404481507667,
            0.00014412022407538335,
            1.0,
            -1.6994300445477413,
            0.7605189168179212,
        ),
        (1.0, 2.0, 1.0, 1.0, -1.8252606305804755, 0.8483365778889087),
        (1.0, -2.0, 1.0, 1.0, -1.766937437891802, 0.8764937134483678),
        (1.0, -2.0, 1.0, 1.0, -1.9394195490706143, 0.9537790811163092),
    ),
    SPEECH_BAND_HZ: (
        (
            0.08679701402407393,
            0.17359402804814786,
            0.08679701402407393,
            1.0,
            -0.0357195674492841,
            0.04304659511835309,
        ),
        (1.0, 2.0, 1.0, 1.0, -0.007889589358168504, 0.4600097051351965),
        (1.0, -2.0, 1.0, 1.0, -1.9264989798354915, 0.928090845489262),
        (1.0, -2.0, 1.0, 1.0, -1.9696854398007289, 0.9712216878107379),
    ),
}
#: The band-passes are applied as FIR filters, their impulse responses cut after this many
#: samples (128 ms): the energy left out is below 1e-24 of the whole (the slowest, the
#: 100 Hz edge, needs ~1800), so the outputs are sosfilt's to ~1e-13 of the signal's scale.
IMPULSE_SAMPLES = 2048
#: First-pass smoothing window, ms (Gaussian, standard deviation window/2.5).
FIRST_WINDOW_MS = 25.0
#: Syllable rate at which the second pass keeps the first window, syllables/s.
REFERENCE_RATE = 5.0
#: Bounds of the adaptive window, ms.
WINDOW_RANGE_MS = (12.0, 60.0)
#: Peaks must be within this many dB of the contour's 99th percentile.
PEAK_RANGE_DB = 25.0
#: ...and this far above its 5th percentile (the noise floor, given some pre-roll), dB.
NOISE_MARGIN_DB = 3.0
#: ...and above this absolute level of the nucleus band, dB re full scale.
MIN_PEAK_DBFS = -55.0
#: A peak needs a dip of at least this much on both sides (prominence), dB.
MIN_DIP_DB = 2.5
#: Normalised autocorrelation a nucleus needs at some lag of 2.5-14 ms (70-400 Hz).
VOICING_THRESHOLD = 0.3
VOICING_F0_RANGE_HZ = (70.0, 400.0)
VOICING_WINDOW_SECONDS = 0.04
#: Speech is the contour within this many dB of its 99th percentile, dB.
SPEECH_RANGE_DB = 35.0
#: Quiet runs at least this long are pauses, s.
MIN_PAUSE_SECONDS = 0.15
#: A sample at or above this fraction of full scale counts as clipped.
CLIP_LEVEL = 0.99
#: Offset of the two spectra compared around a nucleus for steadiness, s.
STEADINESS_OFFSET_SECONDS = 0.03


@dataclass(frozen=True, slots=True)
class AcousticAnalysis:
    """What the estimator found in one utterance; times are s from the audio's start."""

    nuclei_seconds: tuple[float, ...]
    speech_start_seconds: float
    speech_end_seconds: float
    pause_seconds: float
    #: Share of samples at full scale (the input was clipped).
    clipped_fraction: float
    #: Median over nuclei of the correlation of the log spectra 30 ms before and after
    #: each one: speech stays below ~0.93 (formants move), held musical notes and beeps
    #: are ~1.0. 0 when there are no nuclei.
    steadiness: float
    #: Second-pass smoothing window, ms.
    window_ms: float

    @property
    def nuclei(self) -> int:
        """Number of syllable nuclei."""
        return len(self.nuclei_seconds)

    @property
    def speech_seconds(self) -> float:
        """From the first to the last sound of speech, s."""
        return max(0.0, self.speech_end_seconds - self.speech_start_seconds)

    @property
    def articulation_seconds(self) -> float:
        """Speech time without the pauses of 150 ms or more, s."""
        return max(0.0, self.speech_seconds - self.pause_seconds)


def analyse_chunk(chunk: AudioChunk, within: tuple[float, float] | None = None) -> AcousticAnalysis:
    """Analyse an audio chunk of any format (``within``: see :func:`analyse`)."""
    audio = to_float_mono(chunk)
    if chunk.rate_hz != ANALYSIS_RATE_HZ:
        audio = resample(audio, chunk.rate_hz, ANALYSIS_RATE_HZ)
    return analyse(audio, within)


def analyse(
    audio: npt.NDArray[np.floating], within: tuple[float, float] | None = None
) -> AcousticAnalysis:
    """Find syllable nuclei, speech extent and pauses in 16 kHz float audio in [-1, 1].

    ``within`` (s from the audio's start) limits where speech is looked for, e.g. to the
    VAD's speech when the pre-roll may hold the end of the wake word; the audio outside
    still sets the noise floor.
    """
    x = np.asarray(audio, dtype=np.float64)
    clipped = float(np.mean(np.abs(x) >= CLIP_LEVEL)) if len(x) else 0.0
    empty = AcousticAnalysis((), 0.0, 0.0, 0.0, clipped, 0.0, FIRST_WINDOW_MS)
    if len(x) < 4 * _HOP:
        return empty
    nucleus, speech = band_passes(x, (NUCLEUS_BAND_HZ, SPEECH_BAND_HZ))
    nucleus_power = nucleus**2
    speech_db = _contour(speech**2, FIRST_WINDOW_MS)
    limits = (
        (0, len(speech_db))
        if within is None
        else (
            max(0, int(within[0] / HOP_SECONDS)),
            min(len(speech_db), int(within[1] / HOP_SECONDS)),
        )
    )
    start, end, pause_frames = _speech_extent(speech_db, limits)
    if end <= start:
        return empty
    first = _peaks(x, _contour(nucleus_power, FIRST_WINDOW_MS))
    window_ms = FIRST_WINDOW_MS
    articulation = (end - start - pause_frames) * HOP_SECONDS
    if len(first) >= 2 and articulation > 0:
        rate = len(first) / articulation
        window_ms = float(np.clip(FIRST_WINDOW_MS * REFERENCE_RATE / rate, *WINDOW_RANGE_MS))
    nuclei = (
        first if window_ms == FIRST_WINDOW_MS else _peaks(x, _contour(nucleus_power, window_ms))
    )
    inside = nuclei[(nuclei >= start) & (nuclei <= end)]
    centres = inside * _HOP + _HOP // 2
    steadiness = float(np.median(_steadiness(x, centres))) if len(inside) else 0.0
    return AcousticAnalysis(
        nuclei_seconds=tuple(float(f) * HOP_SECONDS for f in inside),
        speech_start_seconds=start * HOP_SECONDS,
        speech_end_seconds=end * HOP_SECONDS,
        pause_seconds=pause_frames * HOP_SECONDS,
        clipped_fraction=clipped,
        steadiness=steadiness,
        window_ms=window_ms,
    )


# --- steps ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _band_filters(bands: tuple[tuple[float, float], ...]) -> dsp.FirFilters:
    """The band-passes as FIR filters (their impulse responses take a few ms, once)."""
    return dsp.FirFilters([dsp.sos_impulse_response(BAND_SOS[b], IMPULSE_SAMPLES) for b in bands])


def band_passes(x: Float, bands: tuple[tuple[float, float], ...]) -> Float:
    """``x`` through each band of BAND_SOS, a row each (as ``scipy.signal.sosfilt``)."""
    return _band_filters(bands)(x)


@functools.lru_cache(maxsize=16)
def _window(window_ms: float) -> Float:
    half = int(ANALYSIS_RATE_HZ * window_ms / 1000.0)
    win = dsp.gaussian(2 * half, std=half / 2.5)
    out: Float = win / win.sum()
    return out


def _contour(power: Float, window_ms: float) -> Float:
    """Smoothed power in dB re full scale, one value per 10 ms hop."""
    smooth = dsp.fftconvolve_same(power, _window(round(window_ms, 1)))
    frames = smooth[_HOP // 2 :: _HOP]
    out: Float = 10.0 * np.log10(np.maximum(frames, 1e-12))
    return out


def _speech_extent(db: Float, limits: tuple[int, int]) -> tuple[int, int, int]:
    """First and last speech frame (within limits), and the frames in pauses between."""
    top = float(np.percentile(db, 99))
    if top < MIN_PEAK_DBFS or limits[1] <= limits[0]:
        return 0, 0, 0
    floor = max(top - SPEECH_RANGE_DB, float(np.percentile(db, 5)) + NOISE_MARGIN_DB)
    loud = np.nonzero(db[limits[0] : limits[1]] > floor)[0] + limits[0]
    if not len(loud):
        return 0, 0, 0
    start, end = int(loud[0]), int(loud[-1]) + 1
    quiet = db[start:end] <= floor
    # lengths of the runs of quiet frames
    edges = np.diff(np.concatenate(([0], quiet.astype(np.int8), [0])))
    runs = np.nonzero(edges == -1)[0] - np.nonzero(edges == 1)[0]
    min_frames = round(MIN_PAUSE_SECONDS / HOP_SECONDS)
    return start, end, int(runs[runs >= min_frames].sum())


def _peaks(x: Float, db: Float) -> npt.NDArray[np.intp]:
    """Voiced contour peaks (frame indices)."""
    top = float(np.percentile(db, 99))
    height = max(top - PEAK_RANGE_DB, float(np.percentile(db, 5)) + NOISE_MARGIN_DB, MIN_PEAK_DBFS)
    peaks = dsp.find_peaks(db, height=height, prominence=MIN_DIP_DB)
    if not len(peaks):
        return peaks
    voiced: npt.NDArray[np.intp] = peaks[_voicing(x, peaks * _HOP + _HOP // 2) >= VOICING_THRESHOLD]
    return voiced


def _segments(x: Float, centres: npt.NDArray[np.intp], length: int) -> Float:
    padded = np.concatenate((np.zeros(length), x, np.zeros(length)))
    starts = centres - length // 2 + length
    index = starts[:, None] + np.arange(length)[None, :]
    out: Float = padded[index]
    return out


def _voicing(x: Float, centres: npt.NDArray[np.intp]) -> Float:
    """Peak normalised autocorrelation over pitch lags, per centre sample."""
    n = int(VOICING_WINDOW_SECONDS * ANALYSIS_RATE_HZ)
    low_lag = int(ANALYSIS_RATE_HZ / VOICING_F0_RANGE_HZ[1])
    high_lag = int(ANALYSIS_RATE_HZ / VOICING_F0_RANGE_HZ[0])
    seg = _segments(x, centres, n + high_lag)
    seg = seg - seg.mean(axis=1, keepdims=True)
    head = seg[:, :n]
    size = 1 << int(np.ceil(np.log2(2 * (n + high_lag))))
    spec_all = np.fft.rfft(seg, size)
    spec_head = np.fft.rfft(head, size)
    cross = np.fft.irfft(spec_all * np.conj(spec_head), size)[:, low_lag : high_lag + 1]
    energy = np.cumsum(np.concatenate((np.zeros((len(seg), 1)), seg**2), axis=1), axis=1)
    lags = np.arange(low_lag, high_lag + 1)
    window_energy = energy[:, lags + n] - energy[:, lags]
    head_energy = (head**2).sum(axis=1, keepdims=True)
    denom = np.sqrt(np.maximum(head_energy * window_energy, 1e-20))
    out: Float = np.max(cross / denom, axis=1)
    return out


def _steadiness(x: Float, centres: npt.NDArray[np.intp]) -> Float:
    """Correlation of the log spectra (100-4000 Hz) 30 ms before and after each centre."""
    n = int(VOICING_WINDOW_SECONDS * ANALYSIS_RATE_HZ)
    offset = int(STEADINESS_OFFSET_SECONDS * ANALYSIS_RATE_HZ)
    freqs = np.fft.rfftfreq(2 * n, 1.0 / ANALYSIS_RATE_HZ)
    band = (freqs >= 100.0) & (freqs <= 4000.0)
    logs = []
    for shift in (-offset, offset):
        seg = _segments(x, centres + shift, n) * np.hanning(n)
        power = np.abs(np.fft.rfft(seg, 2 * n))[:, band] ** 2
        log = np.log(power + 1e-3 * power.max(axis=1, keepdims=True) + 1e-20)
        logs.append(log - log.mean(axis=1, keepdims=True))
    before, after = logs
    out: Float = (before * after).sum(axis=1) / np.sqrt(
        np.maximum((before**2).sum(axis=1) * (after**2).sum(axis=1), 1e-20)
    )
    return out
