"""Our own echo canceller: a partitioned-block frequency-domain adaptive filter (MDF)
whose learning stops while someone talks over the reply.

Why: libspeexdsp's canceller keeps adapting while a person talks over the reply; its
filter learns part of the person and leaves ~11 dB of the echo (bench/echo_words.py).
This one has two filters over the same far-end history (the two-path structure):

- the *background* filter learns (NLMS per frequency bin, normalised by the far end's
  power), but only in frames the double-talk detector calls echo-only;
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

Overlap-save with a 10 ms hop: blocks of 2 x 160 samples, ``tail_ms / 10`` partitions,
numpy only (rfft of 320 points); no added delay (the output frame is the input frame).
A residual echo suppressor (``echo_residual``) can follow (``residual_suppression_db``,
off by default: it takes out 8-14 dB more echo but its gating of the room's noise made
the recognizer add words: bench/echo_words.py).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .echo_residual import ResidualEchoSuppressor

Int16 = npt.NDArray[np.int16]
Float = npt.NDArray[np.float64]
Complex = npt.NDArray[np.complex128]

#: NLMS step of the background filter (0-1 per bin, normalised by the far end's power).
STEP = 0.5
#: Smoothing of the far end's power per bin (per frame).
POWER_SMOOTHING = 0.3
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
#: Added to the far end's power per bin before dividing (per sample, per partition).
REGULARISATION = 100.0


def _power_db(x: float) -> float:
    return 10.0 * float(np.log10(x + 1e-3))


class MdfEchoCanceller:
    """One microphone, one speaker, 10 ms frames at 16 kHz. With the residual echo
    suppressor (``residual_suppression_db`` > 0) the output comes one frame late."""

    def __init__(
        self,
        rate_hz: int = 16000,
        frame_samples: int = 160,
        tail_ms: int = 400,
        residual_suppression_db: float = 0.0,
    ) -> None:
        self.rate_hz = rate_hz
        self.frame_samples = frame_samples
        self.partitions = max(1, round(tail_ms * rate_hz / 1000 / frame_samples))
        self.residual: ResidualEchoSuppressor | None = None
        if residual_suppression_db > 0:
            self.residual = ResidualEchoSuppressor(frame_samples, residual_suppression_db)
        #: How late the output is, samples.
        self.output_delay_samples = frame_samples if self.residual is not None else 0
        self.reset()

    def reset(self) -> None:
        """Forget the learnt room."""
        n, bins = self.frame_samples, self.frame_samples + 1
        self._far_prev = np.zeros(n)
        # the far end's spectra, newest first, as a window onto a buffer twice as long
        # (shifted once every ``partitions`` frames instead of every frame)
        self._far_history: Complex = np.zeros((2 * self.partitions, bins), np.complex128)
        self._newest = self.partitions
        self._far_spectra: Complex = self._far_history[self._newest :][: self.partitions]
        self._back: Complex = np.zeros((self.partitions, bins), np.complex128)
        self._fore: Complex = np.zeros((self.partitions, bins), np.complex128)
        self._far_power = np.zeros(bins)
        self._far_energy = np.zeros(self.partitions)  # per frame, the last ``partitions``
        #: The echo loss the output filter has been reaching, dB (0: not learnt yet).
        self.erle_db = 0.0
        self._hold = 0
        self._mic_smooth = 0.0  # smoothed power of the microphone and the output
        self._out_smooth = 0.0
        self._fore_error = 0.0  # smoothed error power of each filter, echo-only frames
        self._back_error = 0.0
        #: Whether the last frame was taken for double talk (the filter held still).
        self.double_talk = False
        self.frames_adapted = 0
        if self.residual is not None:
            self.residual.reset()

    def close(self) -> None:
        """Nothing to release."""

    def process(self, mic: Int16, far: Int16) -> Int16:
        """The microphone frame with the echo of ``far`` (same length) taken out."""
        n = self.frame_samples
        near = np.asarray(mic, np.float64)
        play = np.asarray(far, np.float64)
        block = np.concatenate([self._far_prev, play])
        self._far_prev = play
        spectrum = np.fft.rfft(block)
        self._push(spectrum)
        self._far_energy[self._newest % self.partitions] = float(np.mean(play**2))
        # NLMS over the whole tail: the far end's power in every partition, per bin
        self._far_power += POWER_SMOOTHING * (
            np.sum(np.abs(self._far_spectra) ** 2, axis=0) - self._far_power
        )

        fore = near - np.fft.irfft(np.sum(self._fore * self._far_spectra, axis=0), 2 * n)[n:]
        back = near - np.fft.irfft(np.sum(self._back * self._far_spectra, axis=0), 2 * n)[n:]
        mic_power = float(np.mean(near**2))
        fore_power = float(np.mean(fore**2))
        back_power = float(np.mean(back**2))
        playing = float(np.max(self._far_energy)) > FAR_ACTIVE_POWER
        self._detect(mic_power, fore_power, playing)
        if playing and not self.double_talk:
            self._adapt(back)
            self._compare(fore_power, back_power)
        if self.residual is not None:
            leak = 10 ** (-self.erle_db / 10)
            fore = self.residual.process(fore, near - fore, leak)
        out = np.clip(np.round(fore), -32768, 32767).astype(np.int16)
        return out

    def _push(self, spectrum: Complex) -> None:
        k = self.partitions
        if self._newest == 0:
            self._far_history[k:] = self._far_history[:k]
            self._newest = k
        self._newest -= 1
        self._far_history[self._newest] = spectrum
        self._far_spectra = self._far_history[self._newest : self._newest + k]

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

    def _adapt(self, error: Float) -> None:
        """One NLMS step of the background filter, gradient constrained to the
        partition's first half (overlap-save)."""
        n = self.frame_samples
        spectrum = np.fft.rfft(np.concatenate([np.zeros(n), error]))
        scale = STEP / (self._far_power + REGULARISATION * n * self.partitions)
        gradient = np.conj(self._far_spectra) * (spectrum * scale)
        impulse = np.fft.irfft(gradient, 2 * n, axis=1)
        impulse[:, n:] = 0.0
        self._back += np.fft.rfft(impulse, axis=1)
        self.frames_adapted += 1

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
