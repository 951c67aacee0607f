"""The satellite put together from its configuration, as ``pocket-satellite run`` runs it.

``assemble`` builds the models (understanding, the pipeline's stages, the grammar that
Home Assistant's names rebuild, the feedback sounds, the dialogue) and hands the app the
edges it is given: where events go, the inbox of commands, the TTS engine, the speaker
and the raw publisher. Tests and benchmarks give their own edges and get the same app.
"""

from __future__ import annotations

import queue
from collections.abc import Callable

from .actions import Action
from .app import SatelliteApp
from .app_contract import EventSink
from .app_enrol import EnrolPlace
from .audio.echo_tap import EchoTap
from .audio.io import AudioSink
from .config import Config
from .mqtt.payloads import Command
from .mqtt.tts_responder import Publish
from .pipeline import build_pipeline
from .tts.base import TtsEngine
from .tts.feedback import load_feedback_sounds
from .understanding import build_understanding
from .understanding.dialogue import Dialogue
from .understanding.saved_slots import SavedSlots, starting_config
from .understanding.slot_grammar import SlotGrammar


def assemble(
    config: Config,
    events: EventSink,
    inbox: queue.Queue[Command],
    engine: TtsEngine,
    sink: AudioSink,
    publish: Publish,
    on_action: Callable[[Action], None] | None = None,
) -> SatelliteApp:
    """The whole satellite for ``config``, speaking on ``sink`` (closed by the app)."""
    saved = SavedSlots.for_config(config)
    starting, lists = starting_config(config, saved)
    understanding = build_understanding(starting)
    pipeline = build_pipeline(config, understanding=understanding)
    echo = pipeline.stages.echo
    if echo is not None:  # what goes to the sound card is the echo canceller's reference
        sink = EchoTap(sink, echo.played, flushed=echo.flushed)
    return SatelliteApp(
        pipeline,
        events,
        inbox,
        engine,
        sink,
        publish,
        SlotGrammar(config, understanding, saved, lists),
        config.player,
        load_feedback_sounds(config.tts.feedback),
        Dialogue(config.nlu.ha_timeout_seconds, question=understanding.question),
        on_action,
        enrol_place(config),
    )


def enrol_place(config: Config) -> EnrolPlace | None:
    """Where enrolments by voice go: only a PocketSphinx recognizer can be adapted."""
    if config.stt.engine != "pocketsphinx":
        return None
    return EnrolPlace(config.stt.speakers_dir, config.satellite.language)
