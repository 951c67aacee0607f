"""``pocket-satellite run``: the satellite as users run it (microphone -> pipeline -> MQTT).

``--realtime`` replays a file as a live session: the input is paced as a microphone
would deliver it, and a file output gets what a sound card would have played, silence
included, aligned with the input. ``--timeline`` prints what happens as readable lines;
``--stand-in-ha`` (MQTT off only) answers Home Assistant's intents the way HA would, for
the demo (scripts/demo.sh).
"""

from __future__ import annotations

import argparse
import dataclasses
import queue
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..app import DRAIN_SECONDS, INBOX_SIZE, SatelliteApp
from ..app_contract import EventSink, make_info
from ..assemble import assemble
from ..audio.alsa import AlsaCaptureSource
from ..audio.chunk import AudioChunk
from ..audio.io import AudioSink, AudioSource, open_sink, open_source
from ..audio.realtime import PacedSink, ReplayClock, paced
from ..config import Config, ConfigError, load
from ..mqtt.link import MqttLink
from ..mqtt.payloads import Command, Info
from ..queues import NudgingQueue
from ..service.metrics import Metrics, MetricsSink, serve_prometheus
from ..service.sd_notify import Notifier, Watchdog
from ..stand_in_ha import StandInHomeAssistant
from ..timeline import Timeline
from ..tts.engines import make_engine
from ..understanding.slot_grammar import GrammarStatus


def add_run_command(sub: Any) -> None:
    """Register ``pocket-satellite run`` on the CLI's subparsers."""
    run = sub.add_parser("run", help="run the satellite: microphone -> pipeline -> MQTT")
    run.add_argument("--config", type=Path, required=True, help="YAML configuration file")
    run.add_argument("--input", default=None, help="override audio.input")
    run.add_argument("--output", default=None, help="override audio.output")
    run.add_argument("--max-seconds", type=float, default=None, help="stop after this much audio")
    run.add_argument(
        "--realtime",
        action="store_true",
        help="pace a file or stdin input as a microphone would, and write a file output "
        "time-aligned with it (silence where nothing played)",
    )
    run.add_argument(
        "--timeline", action="store_true", help="print a readable line per event on stdout"
    )
    run.add_argument(
        "--stand-in-ha",
        action="store_true",
        help="with MQTT off: answer Home Assistant's intents as HA would (a demo, no devices)",
    )
    run.set_defaults(func=_run)


def open_output(spec: str, config: Config, clock: ReplayClock | None) -> AudioSink:
    """The speaker at the player's rate; paced like a sound card when replaying a file."""
    player = config.player
    sink = open_sink(spec, rate_hz=player.rate_hz, queue_ms=player.device_queue_ms)
    if clock is None or spec.startswith("alsa:"):
        return sink  # a real device keeps its own time
    return PacedSink(sink, clock, player.rate_hz)


def _run(args: argparse.Namespace) -> int:
    config = load(args.config)
    config.logging.apply()
    spec = args.input or config.audio.input
    _check_arguments(args, spec, config)
    settings = config.mqtt
    # A file (or stdin) is checked before models load and the link connects: a bad one is
    # one clear error at once. A microphone opens last, so it does not fill its queue.
    early = None if spec.startswith("alsa:") else open_source(spec, config.audio.queue_ms)
    engine = make_engine(config.tts)
    nudge = threading.Event()  # a command wakes a paced loop that sleeps while idle
    inbox: queue.Queue[Command] = NudgingQueue(INBOX_SIZE, on_put=nudge.set)
    info = make_info(config, engine)
    link = MqttLink(settings, info, inbox)
    clock = ReplayClock() if args.realtime else None
    sink = open_output(args.output or config.audio.output, config, clock)
    timeline = Timeline(link) if args.timeline else None
    events: EventSink = timeline if timeline is not None else link
    if args.stand_in_ha:
        events = StandInHomeAssistant(events, inbox)
    metrics = Metrics(config.metrics, link.publish if settings.enabled else None)
    metrics.link_gauges = lambda: _link_gauges(link)
    events = MetricsSink(events, metrics)
    on_action = timeline.action if timeline is not None else None
    app = assemble(config, events, inbox, engine, sink, link.publish, on_action)
    if app.grammar is not None:  # info says what the speech grammar holds, kept current
        link.update_info(with_grammar(info, app.grammar.status()))
        app.grammar.on_swap = lambda status: link.update_info(with_grammar(link.info, status))
    signal.signal(signal.SIGTERM, lambda *_: app.stop())
    if settings.enabled:
        link.start()
    print(
        f"satellite {info.id!r}: listening on {spec}, {_mqtt_line(config, args)}", file=sys.stderr
    )
    source = early or open_source(
        spec, queue_ms=config.audio.queue_ms, max_seconds=args.max_seconds
    )
    metrics.devices.update(capture=source, playback=sink)
    prometheus = config.metrics.prometheus_port
    server = (
        serve_prometheus(metrics, info.id, config.metrics.prometheus_host, prometheus)
        if prometheus is not None
        else None
    )
    frames = metrics.watch(_loop_audio(source, clock, app, nudge))
    notifier = Notifier()  # under systemd (Type=notify): READY, WATCHDOG, STATUS
    watchdog = Watchdog(notifier, lambda: _status_line(app.state, link, settings.enabled))
    try:
        app.run(watchdog.watch(frames))
    finally:
        notifier.stopping()
        notifier.close()
        if server is not None:
            server.shutdown()
        source.close()
        app.close()  # plays out what is queued and closes the output
        engine.close()
        if settings.enabled:
            link.wait_idle(DRAIN_SECONDS)
            link.stop()
    return 0


def _loop_audio(
    source: AudioSource, clock: ReplayClock | None, app: SatelliteApp, nudge: threading.Event
) -> Iterable[AudioChunk]:
    """What the frame loop hears: a replay paced on ``clock``, or the microphone; while
    the loop is idle, either hands over several frames at once (so it wakes up less
    often), and ``nudge`` (set by a command) hands over what was heard at once."""
    if clock is not None:
        return paced(source, clock, app.frames_per_wake, nudge)
    if isinstance(source, AlsaCaptureSource):
        source.nudge = nudge
        return source.cadenced(app.frames_per_wake)
    return source


def _check_arguments(args: argparse.Namespace, spec: str, config: Config) -> None:
    """Flags that do not go with the input or the config: one clear error each."""
    if args.realtime and spec.startswith("alsa:"):
        raise ConfigError(
            "run --realtime",
            [
                f"input {spec}: --realtime paces a file, and a microphone already runs in "
                "real time. Fix: drop --realtime, or give --input FILE.wav"
            ],
        )
    if args.stand_in_ha and config.mqtt.enabled:
        raise ConfigError(
            "run --stand-in-ha",
            [
                "mqtt.enabled: Home Assistant answers over MQTT, the stand-in only plays "
                "its part without it. Fix: set mqtt.enabled: false, or drop --stand-in-ha"
            ],
        )


def with_grammar(info: Info, status: GrammarStatus) -> Info:
    """``info`` with what the speech grammar holds (names, areas, when it was built)."""
    return dataclasses.replace(
        info,
        grammar_names=status.names,
        grammar_areas=status.areas,
        grammar_built=round(status.built, 3),
    )


def _link_gauges(link: MqttLink) -> dict[str, int]:
    """The MQTT link's gauges for the metrics (read from the frame loop's thread)."""
    return {
        "mqtt_connected": int(link.connected.is_set()),
        "mqtt_reconnects": max(0, link.stats.connects - 1),
        "mqtt_rejected": sum(link.stats.rejected.values()),
        "outbox_depth": len(link.outbox),
    }


def _status_line(state: str, link: MqttLink, mqtt_enabled: bool) -> str:
    """systemd's one-line status: the satellite's state and whether the broker is there."""
    if not mqtt_enabled:
        return f"{state}, MQTT off"
    return f"{state}, MQTT {'connected' if link.connected.is_set() else 'not connected'}"


def _mqtt_line(config: Config, args: argparse.Namespace) -> str:
    mqtt = config.mqtt
    if mqtt.enabled:
        return f"MQTT {mqtt.host}:{mqtt.port or '(default port)'}"
    if args.stand_in_ha:
        return "MQTT off (mqtt.enabled: false): a stand-in plays Home Assistant's part"
    return "MQTT off (mqtt.enabled: false): nothing is published, HA intents go unanswered"
