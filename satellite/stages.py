"""The front-end stages the frame loop drives, built from the configuration."""

from __future__ import annotations

from dataclasses import dataclass

from .config import Config
from .frontend.base import FrameFilter, VoiceActivityDetector, WakeWordDetector
from .frontend.echo import EchoStage
from .frontend.echo_engines import make_echo_canceller
from .frontend.echo_talk_over import TalkOver
from .frontend.expander import DownwardExpander
from .frontend.gain import AutoGain
from .frontend.noise import PassThrough, make_noise_suppressor, make_wake_ears
from .frontend.recorder import UtteranceRecorder
from .frontend.vad import make_vad
from .frontend.wake import MicroWakeWordDetector
from .frontend.wake_check import make_band_check
from .prosody.monitor import ProsodyMonitor
from .stt.keywords import StopWordSpotter
from .understanding import Understanding


@dataclass(slots=True)
class Stages:
    """The front-end stages the frame loop drives."""

    noise: FrameFilter
    gain: FrameFilter
    vad: VoiceActivityDetector
    wake: WakeWordDetector | None
    recorder: UtteranceRecorder
    understanding: Understanding | None = None
    #: Speech rate and rushed-speech alerts; with understanding present it runs there
    #: (it then gets the recognised words too).
    prosody: ProsodyMonitor | None = None
    #: The speaker's echo out of the microphone (frontend.echo; fed by audio.echo_tap).
    echo: EchoStage | None = None
    #: What the wake word hears the microphone through (None: the denoised audio).
    wake_ears: FrameFilter | None = None
    #: Stop words said over a reply, heard in the echo-cancelled audio while the
    #: satellite speaks (frontend.echo.hear_while_speaking; only with ``echo``).
    stop_words: StopWordSpotter | None = None
    #: Other speech over a reply, which pauses it (with ``stop_words``, on its gate).
    talk_over: TalkOver | None = None


def build_stages(
    config: Config, continuous: bool = False, understanding: Understanding | None = None
) -> Stages:
    """Build every stage from the configuration (loads the models).

    With ``understanding``, speech rate is measured there (with the recognised words), so
    no second prosody monitor is built.
    """
    fe = config.frontend
    webrtc_agc = fe.noise.engine == "webrtc" and fe.gain.enabled
    noise = make_noise_suppressor(
        fe.noise.engine,
        fe.noise.suppression_db,
        fe.noise.webrtc_level,
        webrtc_auto_gain_dbfs=min(31, max(0, round(-fe.gain.target_dbfs))) if webrtc_agc else 0,
    )
    gain: FrameFilter = (
        AutoGain(fe.gain.target_dbfs, fe.gain.max_gain_db)
        if fe.gain.enabled and not webrtc_agc
        else PassThrough("gain")
    )
    wake = (
        None
        if continuous
        else MicroWakeWordDetector(
            fe.wake.models,
            fe.wake.probability_cutoff,
            fe.wake.refractory_seconds,
            make_band_check(fe.wake.checked_above, fe.wake.models),
            DownwardExpander(fe.wake.expand_db) if fe.wake.expand_db else None,
        )
    )
    vad = make_vad(fe.vad.engine)
    wake_ears = None if wake is None else make_wake_ears(fe.wake.hears)
    prosody = (
        ProsodyMonitor(config.prosody) if config.prosody.enabled and understanding is None else None
    )
    echo = None
    stop_words = None
    if fe.echo.enabled:
        echo = EchoStage(
            make_echo_canceller(
                fe.echo.engine, fe.echo.tail_ms, fe.echo.mdf_adaptation, fe.echo.residual_gate
            ),
            latency_seconds=(fe.echo.latency_ms or 0) / 1000,
        )
        if fe.echo.hear_while_speaking:
            stop_words = StopWordSpotter(
                fe.echo.stop_words, fe.echo.stop_margin_db, config.satellite.language
            )
    talk_over = None
    if stop_words is not None:
        talk_over = TalkOver(
            stop_words.gate,
            fe.vad.threshold,
            fe.echo.talk_over_margin_db,
            vad.lag_seconds,
            ask_again=fe.echo.ask_again_over_reply,
        )
    return Stages(
        echo=echo,
        noise=noise,
        gain=gain,
        vad=vad,
        wake=wake,
        recorder=UtteranceRecorder(
            fe.recorder,
            fe.vad.threshold,
            continuous=continuous,
            lag_seconds=vad.lag_seconds,
            warm_up_seconds=vad.warm_up_seconds,
            end_lag_seconds=vad.end_lag_seconds,
        ),
        understanding=understanding,
        prosody=prosody,
        wake_ears=wake_ears,
        stop_words=stop_words,
        talk_over=talk_over,
    )
