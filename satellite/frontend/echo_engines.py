"""Echo cancellers for the front end: libspeexdsp's MDF, WebRTC's AEC3 and our own MDF
with a double-talk detector (``echo_mdf``).

Both take 10 ms frames of the microphone (*near end*) and of what the speaker played
(*far end*, aligned by ``EchoReference``) and return the microphone with the echo taken
out (speex's output comes one frame later). Measured on a simulated room (tests/room.py,
``python -m bench.echo``, bench/results/echo.json), a reply with a person saying "stop"
6 dB below its echo:
- ``speex`` (Debian ``libspeexdsp1`` through ctypes, with its residual echo
  suppressor): 5-10 dB of echo taken out in the first second, 9-14 dB in the next,
  25-33 dB after 2 s in rooms with RT60 up to 0.4 s, 19 dB at 0.6 s; the filter it
  learns stays for the next replies. The person comes through (correlation 0.90-0.96,
  about 1 dB quieter). No memory; 0.08-0.12 ms per frame.
- ``webrtc`` (AEC3 from the ``livekit`` package, extra ``echo``): 19-42 dB from the
  first second, 29-45 dB later, but its suppressor also takes the person 5-24 dB down
  (correlation 0.3-0.56) while the reply plays, which defeats hearing "stop" over it;
  +40 MB, 0.1-0.3 ms per frame. So speex is the default.
- ``mdf`` (``echo_mdf``, numpy, 600 ms tail): learns only while nobody talks over the
  reply, so the person's voice comes through whole and the echo stays out while they
  talk (29-33 dB over a learnt room, speex 15-16: tests/test_echo_mdf.py); a new room's
  first second about as speex (4.4-9.1 dB against 4.9-9.7), the next second more
  (10-16.6 dB against 9.4-14.9), 22-28 dB after 2 s (linear only; it learns again from
  the frames it has just heard while young). 0.2-0.3 ms per frame (CPU) once learnt,
  ~0.3 while learning a new room. Its tail was 400 ms: in a room of RT60 0.6 s a person's
  words over a reply were heard far worse with it (why is not settled: README). With its
  residual echo gate (``echo_gate``, ``frontend.echo.residual_gate``, off): 31.7-36.4 dB
  in the second after 1 s of a new room's echo (bench/results/echo_gate.json), ~0.01 ms
  more per frame.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..errors import MissingDependencyError, SatelliteError
from .echo_mdf import TAIL_MS, MdfEchoCanceller

Int16 = npt.NDArray[np.int16]
ECHO_ENGINES = ("speex", "webrtc", "mdf")
#: How late each engine's output comes, samples (speex: one frame; AEC3: 8 ms; mdf: none).
OUTPUT_DELAY_SAMPLES = {"speex": 160, "webrtc": 128, "mdf": 0}
#: The echo tail each engine learns unless ``frontend.echo.tail_ms`` says, ms.
DEFAULT_TAIL_MS = {"speex": 200, "webrtc": 0, "mdf": TAIL_MS}


class EchoCanceller(Protocol):
    """One microphone, one speaker, 10 ms frames at 16 kHz."""

    def process(self, mic: Int16, far: Int16) -> Int16:
        """The microphone frame with the echo of ``far`` taken out."""

    def reset(self) -> None:
        """Forget the learnt room."""

    def close(self) -> None:
        """Release the engine."""


class EchoCancellerUnavailableError(SatelliteError):
    """The echo canceller's library is not installed."""


class WebRtcEchoCanceller:
    """WebRTC's AEC3 (with its residual echo suppressor), from the ``livekit`` package."""

    def __init__(self, rate_hz: int = 16000, frame_samples: int = 160) -> None:
        try:
            from livekit import rtc  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError("livekit", "echo", "WebRTC echo cancellation") from err
        self._rtc: Any = rtc
        self.rate_hz = rate_hz
        self.frame_samples = frame_samples
        self._apm: Any = rtc.AudioProcessingModule(echo_cancellation=True)

    def process(self, mic: Int16, far: Int16) -> Int16:
        frame = self._rtc.AudioFrame
        self._apm.process_reverse_stream(
            frame(np.ascontiguousarray(far, np.int16).tobytes(), self.rate_hz, 1, len(far))
        )
        near = frame(np.ascontiguousarray(mic, np.int16).tobytes(), self.rate_hz, 1, len(mic))
        self._apm.set_stream_delay_ms(0)  # the reference comes aligned
        self._apm.process_stream(near)
        return np.frombuffer(bytes(near.data), dtype=np.int16).copy()

    def reset(self) -> None:
        self._apm = self._rtc.AudioProcessingModule(echo_cancellation=True)

    def close(self) -> None:
        self._apm = None


_SET_SAMPLING_RATE = 24  # SPEEX_ECHO_SET_SAMPLING_RATE
_PP_SET_DENOISE = 0
_PP_SET_AGC = 2
_PP_SET_NOISE_SUPPRESS = 18
_PP_SET_DEREVERB = 8
_PP_SET_ECHO_SUPPRESS = 20
_PP_SET_ECHO_SUPPRESS_ACTIVE = 22
_PP_SET_ECHO_STATE = 24


def _library() -> Any:
    name = ctypes.util.find_library("speexdsp")
    if name is None:
        raise EchoCancellerUnavailableError(
            "frontend.echo: echo cancellation needs libspeexdsp. Fix: sudo apt-get install "
            "libspeexdsp1, or set frontend.echo.enabled: false"
        )
    lib = ctypes.CDLL(name)
    lib.speex_echo_state_init.restype = ctypes.c_void_p
    lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_echo_state_destroy.argtypes = [ctypes.c_void_p]
    lib.speex_echo_state_reset.argtypes = [ctypes.c_void_p]
    lib.speex_echo_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_echo_cancellation.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 3
    lib.speex_preprocess_state_init.restype = ctypes.c_void_p
    lib.speex_preprocess_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_preprocess_state_destroy.argtypes = [ctypes.c_void_p]
    lib.speex_preprocess_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_preprocess_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib


class SpeexEchoCanceller:
    """One microphone, one speaker, frames of ``frame_samples`` at ``rate_hz``."""

    def __init__(
        self,
        rate_hz: int = 16000,
        frame_samples: int = 160,
        tail_ms: int = 200,
        residual_suppression_db: int = 40,
    ) -> None:
        self._lib = _library()
        self.rate_hz = rate_hz
        self.frame_samples = frame_samples
        self.tail_samples = rate_hz * tail_ms // 1000
        self.residual_suppression_db = residual_suppression_db
        self._echo: int | None = None
        self._pre: int | None = None
        self._out = np.zeros(frame_samples, dtype=np.int16)
        self._open()

    def _open(self) -> None:
        lib = self._lib
        self._echo = lib.speex_echo_state_init(self.frame_samples, self.tail_samples)
        rate = ctypes.c_int(self.rate_hz)
        lib.speex_echo_ctl(self._echo, _SET_SAMPLING_RATE, ctypes.byref(rate))
        if self.residual_suppression_db > 0:
            self._pre = lib.speex_preprocess_state_init(self.frame_samples, self.rate_hz)
            # Speex applies echo suppression through its denoiser's gains: keep it on, but
            # let it take out almost no noise (the front end's own stage does that).
            off, on = ctypes.c_int(0), ctypes.c_int(1)
            for request in (_PP_SET_AGC, _PP_SET_DEREVERB):
                lib.speex_preprocess_ctl(self._pre, request, ctypes.byref(off))
            lib.speex_preprocess_ctl(self._pre, _PP_SET_DENOISE, ctypes.byref(on))
            noise = ctypes.c_int(-1)
            lib.speex_preprocess_ctl(self._pre, _PP_SET_NOISE_SUPPRESS, ctypes.byref(noise))
            lib.speex_preprocess_ctl(self._pre, _PP_SET_ECHO_STATE, ctypes.c_void_p(self._echo))
            # Speex takes the suppression as negative dB, while the far end plays and not
            suppress = ctypes.c_int(-self.residual_suppression_db)
            for request in (_PP_SET_ECHO_SUPPRESS, _PP_SET_ECHO_SUPPRESS_ACTIVE):
                lib.speex_preprocess_ctl(self._pre, request, ctypes.byref(suppress))

    def process(self, mic: Int16, far: Int16) -> Int16:
        """The microphone frame with the echo of ``far`` (same length) taken out."""
        if self._echo is None:
            raise SatelliteError("echo canceller used after close()")
        near = np.ascontiguousarray(mic, dtype=np.int16)
        play = np.ascontiguousarray(far, dtype=np.int16)
        out = np.empty(self.frame_samples, dtype=np.int16)
        self._lib.speex_echo_cancellation(
            self._echo, near.ctypes.data, play.ctypes.data, out.ctypes.data
        )
        if self._pre is not None:
            self._lib.speex_preprocess_run(self._pre, out.ctypes.data)
        return out

    def reset(self) -> None:
        """Forget the learnt room (a new device, a moved speaker)."""
        self.close()
        self._open()

    def close(self) -> None:
        if self._pre is not None:
            self._lib.speex_preprocess_state_destroy(self._pre)
            self._pre = None
        if self._echo is not None:
            self._lib.speex_echo_state_destroy(self._echo)
            self._echo = None


def make_echo_canceller(
    engine: str,
    tail_ms: int | None = None,
    mdf_adaptation: str = "nlms",
    residual_gate: bool = False,
) -> EchoCanceller:
    """The engine ``frontend.echo.engine`` names; ``tail_ms`` None: the engine's own;
    ``mdf_adaptation``: how ``mdf`` learns (``frontend.echo.mdf_adaptation``);
    ``residual_gate``: ``mdf`` with the residual echo gate (``frontend.echo.residual_gate``)."""
    if engine == "webrtc":
        return WebRtcEchoCanceller()
    if engine in DEFAULT_TAIL_MS:
        tail = DEFAULT_TAIL_MS[engine] if tail_ms is None else tail_ms
        if engine == "mdf":
            return MdfEchoCanceller(
                tail_ms=tail, adaptation=mdf_adaptation, residual_gate=residual_gate
            )
        return SpeexEchoCanceller(tail_ms=tail)
    raise SatelliteError(f"unknown echo engine {engine!r}. Fix: use one of {ECHO_ENGINES}")
