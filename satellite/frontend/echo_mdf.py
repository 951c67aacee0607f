"""Our own echo canceller: a partitioned-block frequency-domain adaptive filter (MDF)
whose learning stops while someone talks over the reply.

Why: libspeexdsp's canceller keeps adapting while a person talks over the reply; its
filter learns part of the person and leaves ~11 dB of the echo (bench/echo_words.py).
This one has two filters over the same far-end history (the two-path structure):

- the *background* filter learns, but only in frames the double-talk detector calls
  echo-only: by default NLMS per frequency bin, normalised by the far end's power; or
  (``adaptation="kalman"``) with a frequency-domain Kalman gain (``echo_kalman``: per
  weight how uncertain it is, per bin how loud the near end is: more echo out sooner,
  and a person talking over a young filter's reply shrinks its step by itself; not the
  default: the recognizer heard people over replies far worse with it, README);
- the *foreground* filter makes the output; it takes the background's coefficients when,
  over the last ``COMPARE_FRAMES`` echo-only frames, the background left clearly less
  (and goes back to them if the background drifted).

The double-talk detector compares this frame's echo loss (microphone power over the
power left after the foreground filter) with the loss the filter has been reaching
(``erle_db``, tracked over echo-only frames): a person's voice is not in the far end, so
the filter cannot take it out and the frame's loss falls far below the usual one. The
decision uses the frame's own error before the filter is updated, so the first frame of
a person's voice is already held back. A moved speaker is not taken for a person: the
filter then adds more than it takes out (the output grows louder than the microphone,
which a person cannot cause), and it learns again at once; a loss that stays low for
long lowers the tracked one slowly as well.

A new filter (or one the moved-speaker check has reset) is *young* until the echo loss
it reaches first comes to ``YOUNG_ERLE_DB`` (or for ``YOUNG_FRAMES``): then each
echo-only frame is remembered and the filter also learns again from ``replays`` of the
last second's remembered frames (``echo_mdf_history``; their gradients are summed with
the new frame's and constrained once, so a replay costs one error estimate), with a
proportionate step (more of it to the partitions that hold most of the room; the
Kalman gain has its own uncertainty per partition instead, and takes 4 replays). A learnt
filter does neither: it costs what it did, and its steps stay small. (A larger step
while young was measured and left out: it took in more of a person talking over the
first reply.)

Overlap-save with a 10 ms hop: blocks of 2 x 160 samples, ``tail_ms / 10`` partitions,
numpy only (rfft of 320 points); no added delay (the output frame is the input frame).
A residual echo suppressor (``echo_residual``) can follow (``residual_suppression_db``,
off by default: it takes out 4.4-5.8 dB more and leaves the room's noise floor alone;
on words: bench/echo_words.py --engines mdf-residual, README), or a residual echo gate
(``echo_gate``, ``residual_gate``: whole frames that hold only what the filter leaves of
the reply taken down, a person's frames passed whole; no delay).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .echo_gate import ResidualEchoGate
from .echo_kalman import KalmanAdaptation
from .echo_mdf_history import FarHistory, ReplayMemory
from .echo_residual import ResidualEchoSuppressor

Int16 = npt.NDArray[np.int16]
Float = npt.NDArray[np.float64]
Complex = npt.NDArray[np.complex128]

#: The echo tail the filter learns unless told, ms (``frontend.echo.tail_ms``; 400 before:
#: README "mdf learns a 600 ms tail").
TAIL_MS = 600
#: NLMS step of the background filter (0-1 per bin, normalised by the far end's power).
STEP = 0.5
#: A filter is young from its start (or a moved speaker) until the echo loss it
#: reaches first comes to this, dB ...
YOUNG_ERLE_DB = 25.0
#: ... or it has learnt on this many frames (a noisy room may never reach it).
YOUNG_FRAMES = 500
#: While young, remembered frames learnt from again per new frame (data reuse; 0: none),
#: in one step with the new frame's (their steps add up: 6 or more overshot).
REPLAYS = 2
#: ... remembered from the last this many frames (10 ms each).
REPLAY_FRAMES = 100
#: While young, a proportionate step (IPNLMS, -1 to 1): how much of the step goes to the
#: partitions that hold most of the filter (-1: none, every partition alike, as NLMS).
PROPORTIONATE = 0.5
#: A frame is double talk when its echo loss is this far below the loss reached, dB.
DOUBLE_TALK_MARGIN_DB = 12.0
#: Frames held back after double talk ends (the person's reverberation), 10 ms each.
HANGOVER_FRAMES = 15
#: The far end counts as playing above this power per sample (int16 units squared).
FAR_ACTIVE_POWER = 100.0
#: The echo loss reached: how fast it follows echo-only frames (per frame, 0-1).
ERLE_RISE = 0.05
#: ... and how fast it falls in a long stretch the detector calls double talk, dB/frame.
ERLE_DECAY_DB = 0.03
#: The background replaces the foreground when it leaves this much less echo, dB.
COPY_MARGIN_DB = 0.5
#: Over this many echo-only frames (smoothed).
COMPARE_FRAMES = 10
#: Smoothing of the microphone's and the output's power for the wrong-room check.
WRONG_ROOM_SMOOTHING = 0.05
#: Smoothing of the echo power the output filter leaves (its leak), per echo-only frame.
LEAK_SMOOTHING = 0.1
#: Added to the far end's power per bin before dividing (per sample, per partition).
REGULARISATION = 100.0
#: Below this echo loss (dB) the Kalman gain is kept open (``KalmanAdaptation.reopen``).
REOPEN_ERLE_DB = 10.0
#: How the background filter can learn (``frontend.echo.mdf_adaptation``), each with its
#: replays while young (the Kalman gain takes 4 well: 2 more added 0.5 dB, at 0.1 ms).
ADAPTATIONS = {"nlms": REPLAYS, "kalman": 4}


def _int16(x: Float) -> Int16:
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def _power_db(x: float) -> float:
    return 10.0 * float(np.log10(x + 1e-3))


class MdfEchoCanceller:
    """One microphone, one speaker, 10 ms frames at 16 kHz. With the residual echo
    suppressor (``residual_suppression_db`` > 0) the output comes one frame late."""

    def __init__(
        self,
        rate_hz: int = 16000,
        frame_samples: int = 160,
        tail_ms: int = TAIL_MS,
        residual_suppression_db: float = 0.0,
        replays: int | None = None,
        adaptation: str = "nlms",
        residual_gate: bool = False,
    ) -> None:
        if adaptation not in ADAPTATIONS:
            raise ValueError(
                f"unknown adaptation {adaptation!r}. Fix: use one of {', '.join(ADAPTATIONS)}"
            )
        self.rate_hz = rate_hz
        #: How the background filter learns: ``nlms`` or ``kalman`` (``echo_kalman``).
        self.adaptation = adaptation
        #: Remembered frames learnt from again per new frame while young.
        self.replays = replays if replays is not None else ADAPTATIONS[adaptation]
        self.frame_samples = frame_samples
        self.partitions = max(1, round(tail_ms * rate_hz / 1000 / frame_samples))
        self.residual: ResidualEchoSuppressor | None = None
        if residual_suppression_db > 0:
            self.residual = ResidualEchoSuppressor(frame_samples, residual_suppression_db)
        #: Frames of only residual echo taken down after the filter (``echo_gate``).
        self.gate = ResidualEchoGate() if residual_gate else None
        #: With the gate: the last frame's output before it (the filter's alone), which
        #: the double-talk checks measure (they were set on the filter's output).
        self.linear: Int16 = np.zeros(frame_samples, np.int16)
        #: How late the output is, samples.
        self.output_delay_samples = frame_samples if self.residual is not None else 0
        self.reset()

    def reset(self) -> None:
        """Forget the learnt room."""
        n, bins = self.frame_samples, self.frame_samples + 1
        self._far_prev = np.zeros(n)
        self._history = FarHistory(self.partitions, bins, REPLAY_FRAMES)
        self._memory = ReplayMemory(REPLAY_FRAMES, n)
        self._back: Complex = np.zeros((self.partitions, bins), np.complex128)
        self._fore: Complex = np.zeros((self.partitions, bins), np.complex128)
        self._kalman = KalmanAdaptation(self.partitions, bins)
        self._far_energy = np.zeros(self.partitions)  # per frame, the last ``partitions``
        #: The echo loss the output filter has been reaching, dB (0: not learnt yet).
        self.erle_db = 0.0
        self._hold = 0
        self._mic_smooth = 0.0  # smoothed power of the microphone and the output
        self._out_smooth = 0.0
        self._fore_error = 0.0  # smoothed error power of each filter, echo-only frames
        self._back_error = 0.0
        self._left = 0.0  # smoothed power left and echo estimated, echo-only frames
        self._estimated = 0.0
        #: Whether the last frame was taken for double talk (the filter held still).
        self.double_talk = False
        self.frames_adapted = 0
        self._young_frames = 0  # frames learnt on since the filter was last young
        #: Steps taken on remembered frames (only while young).
        self.frames_replayed = 0
        if self.residual is not None:
            self.residual.reset()
        if self.gate is not None:
            self.gate.reset()

    @property
    def young(self) -> bool:
        """Whether the filter is still learning a new room (proportionate steps, data reuse):
        until the echo loss first reaches ``YOUNG_ERLE_DB`` or for ``YOUNG_FRAMES``."""
        return self._young_frames < YOUNG_FRAMES

    @property
    def leak(self) -> float:
        """The share of the echo the output filter leaves (power, 0-1), over the last
        echo-only frames."""
        if self._estimated <= 0:
            return 1.0
        return min(1.0, self._left / self._estimated)

    def _track_leak(self, left_power: float, estimate_power: float) -> None:
        self._left += LEAK_SMOOTHING * (left_power - self._left)
        self._estimated += LEAK_SMOOTHING * (estimate_power - self._estimated)

    def close(self) -> None:
        """Nothing to release."""

    def process(self, mic: Int16, far: Int16) -> Int16:
        """The microphone frame with the echo of ``far`` (same length) taken out."""
        near = np.asarray(mic, np.float64)
        play = np.asarray(far, np.float64)
        history = self._history
        history.push(np.fft.rfft(np.concatenate([self._far_prev, play])))
        self._far_prev = play
        self._far_energy[history.frames % self.partitions] = float(np.mean(play**2))
        spectra = history.spectra()
        fore = near - self._estimate(self._fore, spectra)
        back = near - self._estimate(self._back, spectra)
        mic_power = float(np.mean(near**2))
        fore_power = float(np.mean(fore**2))
        back_power = float(np.mean(back**2))
        playing = float(np.max(self._far_energy)) > FAR_ACTIVE_POWER
        self._detect(mic_power, fore_power, playing)
        if playing and not self.double_talk:
            self._learn(near, back)
            self._compare(fore_power, back_power)
            self._track_leak(fore_power, float(np.mean((near - fore) ** 2)))
        if self.residual is not None:
            fore = self.residual.process(fore, near - fore, self.leak)
        elif self.gate is not None:
            self.linear = _int16(fore)
            fore = self.gate.process(fore, near - fore, playing, self.double_talk)
        out = _int16(fore)
        return out

    def _estimate(self, weights: Complex, spectra: Complex) -> Float:
        """A filter's echo estimate for the frame whose far-end spectra these are."""
        n = self.frame_samples
        estimate: Float = np.fft.irfft(np.sum(weights * spectra, axis=0), 2 * n)[n:]
        return estimate

    def _learn(self, near: Float, back: Float) -> None:
        """A step on this echo-only frame; while young, a proportionate one, and steps on
        a few remembered frames as well."""
        young = self.young
        if young:
            self._young_frames += 1
            if self.erle_db >= YOUNG_ERLE_DB:
                self._young_frames = YOUNG_FRAMES  # learnt: young no more
        kalman = self.adaptation == "kalman"
        if kalman and self.erle_db < REOPEN_ERLE_DB:
            self._kalman.reopen()
        shares = self._shares() if young and not kalman else np.ones(self.partitions)
        history = self._history
        gradient = self._gradient(back, history.spectra(), history.power(), shares)
        self.frames_adapted += 1
        if young and self.replays > 0:
            now = history.frames
            self._memory.remember(now, near)
            found = self._memory.take(now, self.replays)
            self.frames_replayed += len(found)
            if kalman and found:  # all remembered frames in one go
                ages = [age for age, _ in found]
                gradient += self._kalman.remembered(
                    self._back, history.stack(ages), np.stack([f[1] for f in found])
                )
            for age, old_near in found if not kalman else ():
                spectra = history.spectra(age)
                error = old_near - self._estimate(self._back, spectra)
                gradient += self._gradient(error, spectra, history.power(age), shares)
        self._step(gradient)

    def _shares(self) -> Float:
        """Each partition's share of the step (IPNLMS; they sum to ``partitions``):
        partly alike, partly by how much of the filter it holds."""
        k = self.partitions
        norms = np.sqrt(np.sum(self._back.real**2 + self._back.imag**2, axis=1))
        total = float(np.sum(norms))
        if total <= 0:
            return np.ones(k)
        alike = (1 - PROPORTIONATE) / 2
        shares: Float = alike + (1 + PROPORTIONATE) / 2 * k * norms / total
        return shares

    def _detect(self, mic_power: float, error_power: float, playing: bool) -> None:
        """Double talk: this frame's echo loss far below the loss the filter reaches.

        Not when the output has been louder than the microphone for a while: a person
        adds as much to both, so that is a filter for another room (a moved speaker),
        and it must learn again now."""
        if playing:
            self._mic_smooth += WRONG_ROOM_SMOOTHING * (mic_power - self._mic_smooth)
            self._out_smooth += WRONG_ROOM_SMOOTHING * (error_power - self._out_smooth)
            if self._out_smooth > self._mic_smooth:
                self.erle_db = 0.0
                self._hold = 0
                self._memory.reset()  # frames of the old room
                self._young_frames = 0
                self._kalman.reset()
        frame_erle = _power_db(mic_power) - _power_db(error_power)
        talking = playing and frame_erle < self.erle_db - DOUBLE_TALK_MARGIN_DB
        if talking:
            self._hold = HANGOVER_FRAMES
            self.erle_db = max(0.0, self.erle_db - ERLE_DECAY_DB)
        elif self._hold > 0:
            self._hold -= 1
        elif playing:
            self.erle_db += ERLE_RISE * (frame_erle - self.erle_db)
        self.double_talk = talking or self._hold > 0

    def _gradient(self, error: Float, spectra: Complex, power: Float, shares: Float) -> Complex:
        """The step of the background filter for one frame's error (not yet
        constrained): proportionate NLMS, or for a new frame the Kalman gain (which
        learns from it how uncertain each weight is and how loud the near end is)."""
        n = self.frame_samples
        spectrum = np.fft.rfft(np.concatenate([np.zeros(n), error]))
        if self.adaptation == "kalman":
            return self._kalman.gradient(spectrum, spectra, power, self._back)
        norm = shares @ power + REGULARISATION * n * self.partitions
        gradient: Complex = np.conj(spectra) * (spectrum * (STEP / norm)) * shares[:, None]
        return gradient

    def _step(self, gradient: Complex) -> None:
        """The background filter moved by ``gradient``, constrained to each partition's
        first half (overlap-save)."""
        n = self.frame_samples
        impulse = np.fft.irfft(gradient, 2 * n, axis=1)
        impulse[:, n:] = 0.0
        self._back += np.fft.rfft(impulse, axis=1)

    def _compare(self, fore_power: float, back_power: float) -> None:
        """The foreground takes the background when it leaves clearly less echo; the
        background goes back to the foreground when it has drifted."""
        alpha = 1.0 / COMPARE_FRAMES
        self._fore_error += alpha * (fore_power - self._fore_error)
        self._back_error += alpha * (back_power - self._back_error)
        margin = 10 ** (COPY_MARGIN_DB / 10)
        if self._back_error * margin < self._fore_error:
            self._fore = self._back.copy()
            self._fore_error = self._back_error
        elif self._back_error > 4 * self._fore_error:
            self._back = self._fore.copy()
            self._back_error = self._fore_error
