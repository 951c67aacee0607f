"""``pocket-satellite doctor``: is this Pi ready to run the satellite, and if not, why?

Checks the config, the audio devices (lists them, opens the microphone and measures its
level for 2 s, opens the speaker), the model files and their checksums, the broker and
its credentials, the speech grammar and the LLM (how long each takes to load), then the
machine (``host.py``). Each check says OK, a warning or a problem, with the fix.
"""

from __future__ import annotations

import math
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from ..audio.chunk import AudioChunk, to_float_mono
from ..audio.io import open_sink, open_source
from ..config import Config, ConfigError, load
from ..errors import SatelliteError
from ..models import check as check_model
from ..models import load_manifest
from . import host
from .report import Finding, ok, problem, skipped, warning

#: A microphone whose loudest sample in 2 s is below this delivers silence, dBFS.
SILENT_DBFS = -70.0
#: A microphone above this clips: too much gain, dBFS.
CLIPPING_DBFS = -0.5
BROKER_TIMEOUT_SECONDS = 5.0


def diagnose(config_path: Path, listen_seconds: float = 2.0) -> list[Finding]:
    """Every check, in the order a person would fix things."""
    try:
        config = load(config_path)
    except ConfigError as err:
        return [problem("config", str(err).splitlines()[0], "; ".join(err.problems))]
    except SatelliteError as err:
        return [problem("config", str(err), f"fix {config_path}")]
    findings = [ok("config", f"{config_path} is valid")]
    findings += audio_devices(config, listen_seconds)
    findings += models()
    findings.append(broker(config))
    findings.append(grammar(config))
    findings.append(llm(config))
    findings += [
        host.governor(),
        host.temperature(),
        host.throttling(),
        host.memory(),
        host.disk(config.mqtt.outbox_file.parent),
    ]
    return findings


def audio_devices(config: Config, listen_seconds: float) -> list[Finding]:
    """The ALSA devices, then the configured microphone and speaker, opened for real."""
    found = []
    if config.audio.input.startswith("alsa:") or config.audio.output.startswith("alsa:"):
        try:
            from ..audio.alsa import list_devices  # noqa: PLC0415

            capture, playback = list_devices(capture=True), list_devices(capture=False)
            found.append(
                ok(
                    "alsa devices",
                    f"capture: {', '.join(capture) or 'none'}; "
                    f"playback: {', '.join(playback) or 'none'}",
                )
            )
        except SatelliteError as err:
            return [problem("alsa devices", str(err), "pip install 'pocket-satellite[alsa]'")]
    found.append(microphone(config, listen_seconds))
    found.append(speaker(config))
    return found


def microphone(config: Config, listen_seconds: float) -> Finding:
    spec = config.audio.input
    if not spec.startswith("alsa:"):
        return skipped("microphone", f"audio.input is {spec!r}, not a device")
    try:
        source = open_source(spec, queue_ms=config.audio.queue_ms, max_seconds=listen_seconds)
        try:
            peak, rms = level(source)
        finally:
            source.close()
    except SatelliteError as err:
        what, fix = split_fix(str(err), "list devices with `arecord -L`; set audio.input")
        return problem("microphone", f"cannot capture from {spec}: {what}", fix)
    heard = f"{spec}: peak {peak:.1f} dBFS, RMS {rms:.1f} dBFS over {listen_seconds:g} s"
    if peak < SILENT_DBFS:
        return problem(
            "microphone", f"{heard}: silence", "unmute and raise the capture level: alsamixer -c N"
        )
    if peak > CLIPPING_DBFS:
        return warning("microphone", f"{heard}: clipping", "lower the capture level in alsamixer")
    return ok("microphone", heard)


def level(chunks: Iterable[AudioChunk]) -> tuple[float, float]:
    """Peak and RMS of the chunks, dBFS (-inf for digital silence)."""
    audio = [to_float_mono(c) for c in chunks]
    samples = np.concatenate(audio) if audio else np.zeros(1, dtype=np.float32)
    peak = float(np.max(np.abs(samples)))
    rms = float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))
    return _db(peak), _db(rms)


def split_fix(message: str, default_fix: str) -> tuple[str, str]:
    """An error's "what. Fix: how" as (what, how); ``default_fix`` when it names none."""
    what, sep, fix = message.partition(" Fix: ")
    return (what.rstrip(". ") or message, fix) if sep else (message, default_fix)


def _db(value: float) -> float:
    return 20 * math.log10(value) if value > 0 else -math.inf


def speaker(config: Config) -> Finding:
    spec = config.audio.output
    if not spec.startswith("alsa:"):
        return skipped("speaker", f"audio.output is {spec!r}, not a device")
    rate = config.player.rate_hz
    try:
        sink = open_sink(spec, rate_hz=rate, queue_ms=config.player.device_queue_ms)
        try:
            samples = bytes(2 * rate // 10)  # 100 ms of silence: opens and plays, no noise
            sink.write(AudioChunk(rate, 2, 1, samples))
        finally:
            sink.close()
    except SatelliteError as err:
        what, fix = split_fix(
            str(err), "list devices with `aplay -L`; set audio.output, or player.rate_hz"
        )
        return problem("speaker", f"cannot play on {spec} at {rate} Hz: {what}", fix)
    return ok("speaker", f"{spec} plays at {rate} Hz")


def models() -> list[Finding]:
    out = []
    for status in map(check_model, load_manifest()):
        name = f"model {status.entry.id}"
        if status.ok:
            out.append(ok(name, f"{status.location} (sha256 matches)"))
        else:
            out.append(problem(name, *split_fix(status.problem, "see `pocket-satellite models`")))
    return out


def broker(config: Config, timeout: float = BROKER_TIMEOUT_SECONDS) -> Finding:
    """Connects with the satellite's credentials and TLS; says what went wrong."""
    settings = config.mqtt
    if not settings.enabled:
        return skipped("broker", "mqtt.enabled is false")
    where = f"{settings.host}:{settings.effective_port}"
    try:
        code = _connect(config, timeout)
    except ssl.SSLCertVerificationError as err:
        return problem(
            "broker",
            f"{where}: the broker's certificate failed verification ({err.verify_message})",
            "set mqtt.tls_ca_file to the CA that signed the broker's certificate, and use "
            "the host name the certificate names",
        )
    except ssl.SSLError as err:
        return problem(
            "broker",
            f"{where}: TLS failed ({err.reason or err})",
            "is the port a TLS port? Plain MQTT is usually 1883, TLS 8883",
        )
    except ConnectionRefusedError:
        return problem(
            "broker", f"{where}: connection refused", "start Mosquitto, or fix mqtt.host/port"
        )
    except (OSError, TimeoutError) as err:
        return problem(
            "broker",
            f"{where}: unreachable ({err})",
            "check mqtt.host, the network, and that the broker listens on that port",
        )
    except SatelliteError as err:
        return problem("broker", str(err), "fix the mqtt section of the config")
    if code is None:
        return problem(
            "broker",
            f"{where}: no answer to CONNECT in {timeout:g} s (TLS port with mqtt.tls off?)",
            "set mqtt.tls: true for a TLS port, or use the plain port",
        )
    if code != "Success":
        return problem(
            "broker",
            f"{where}: refused the login ({code})",
            "check mqtt.username and mqtt.password_file, and the broker's password file",
        )
    return ok("broker", f"{where}: connected and logged in")


def _connect(config: Config, timeout: float) -> str | None:
    """The broker's CONNACK reason, or None when none came in time."""
    from ..mqtt.client import make_client  # noqa: PLC0415

    settings = config.mqtt
    client = make_client(settings, f"pocket_satellite-{config.satellite.id}-doctor", "doctor")
    client.will_clear()  # the doctor's own exit must not mark the satellite offline
    answered = threading.Event()
    reason: list[str] = []

    def on_connect(*args: object) -> None:
        reason.append(str(args[3]))
        answered.set()

    client.on_connect = on_connect
    client.connect(settings.host, settings.effective_port, keepalive=10)
    client.loop_start()
    try:
        answered.wait(timeout)
    finally:
        client.disconnect()
        client.loop_stop()
    return reason[0] if reason else None


def timed(check: str, load_it: Callable[[], object], fix: str) -> Finding:
    """Load something, and say how long it took or why it failed."""
    started = time.perf_counter()
    try:
        load_it()
    except Exception as err:  # noqa: BLE001 - every failure is a finding here
        return problem(check, f"{type(err).__name__}: {err}", fix)
    return ok(check, f"loaded in {time.perf_counter() - started:.1f} s")


def grammar(config: Config) -> Finding:
    if config.stt.engine != "pocketsphinx":
        return skipped("speech grammar", f"stt.engine is {config.stt.engine}: no grammar")

    def build() -> None:
        from ..stt.factory import configured_intent_set, make_recognizer  # noqa: PLC0415

        language = config.satellite.language
        intents = configured_intent_set(config.nlu, language, config.satellite.area)
        make_recognizer(config.stt, language, intents)

    return timed("speech grammar", build, "check nlu.intents, nlu.entities and stt.*")


def llm(config: Config) -> Finding:
    if not config.llm.enabled:
        return skipped("llm", "llm.enabled is false")

    def load_model() -> None:
        from ..nlu.llm import LlmFallback  # noqa: PLC0415

        fallback = LlmFallback(config.llm, config.satellite.language, ())
        try:
            error = fallback.load_report.error
            if error is not None:
                raise SatelliteError(error)
        finally:
            fallback.close()

    return timed("llm", load_model, "pip install 'pocket-satellite[llm]', or llm.enabled: false")
