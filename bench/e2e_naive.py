"""The naive sequential pipeline bench/e2e.py compares the satellite with.

Built from the same engines: it waits the full trailing silence, recognises the whole
utterance only after it ends (the same PocketSphinx grammar), reads the intent, asks the
stand-in Home Assistant over MQTT for HA intents, synthesises the whole reply, and only
then plays it (after the same lead-in). End of speech -> first reply sample is the sum.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from satellite.actions import ReplyRequested
from satellite.audio.chunk import FRAME_SAMPLES, PIPELINE_RATE_HZ, AudioChunk
from satellite.config import Config
from satellite.nlu.intents import CARE_INTENTS
from satellite.nlu.recognizer import TemplateRecognizer
from satellite.stt.factory import configured_intent_set, make_recognizer
from satellite.tts.engines import make_engine
from satellite.understanding.dialogue import Dialogue
from tests.mqtt_support import Mosquitto, Probe

if TYPE_CHECKING:
    from bench.e2e import Interaction

BASE = "pocket_satellite/pocket_satellite"
#: Audio kept before and after the speech, s (the recorder's pre-roll; the tail it hears).
BEFORE_SECONDS = 0.3
AFTER_SECONDS = 0.3


def naive_latencies(
    pcm: np.ndarray, interactions: list[Interaction], folder: Path
) -> dict[str, Any]:
    """Per kind of request: p50/p95 of end of speech -> first reply sample, ms."""
    from bench.e2e import StandInHa, percentiles  # noqa: PLC0415 - each imports the other

    config = Config()
    intent_set = configured_intent_set(config.nlu, config.satellite.language, None)
    recognizer = make_recognizer(config.stt, config.satellite.language, intent_set)
    templates = TemplateRecognizer(intent_set)
    engine = make_engine(config.tts)
    dialogue = Dialogue()
    silence = config.frontend.recorder.trailing_silence_ms / 1000.0
    lead_in = config.player.lead_in_ms / 1000.0
    broker = Mosquitto(folder / "broker-naive")
    broker.start()
    ha = StandInHa(broker.port)
    asker = Probe(broker.port, (f"{BASE}/response",))
    latencies: dict[str, list[float]] = {"home": [], "care": [], "help": []}
    right: dict[str, int] = {"home": 0, "care": 0, "help": 0}
    try:
        for index, item in enumerate(interactions):
            start = round((item.start_seconds - BEFORE_SECONDS) * PIPELINE_RATE_HZ)
            end = round((item.end_seconds + AFTER_SECONDS) * PIPELINE_RATE_HZ)
            utterance = pcm[start:end]
            began = time.perf_counter()
            recognizer.start(0.0)
            for offset in range(0, len(utterance) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
                frame = AudioChunk.from_int16(
                    utterance[offset : offset + FRAME_SAMPLES], timestamp_seconds=offset / 16000
                )
                recognizer.process(frame)
            heard = recognizer.finish()
            result = templates.recognize(heard.text)
            utterance_id = f"n{index}"
            if result.intent is not None and result.intent not in CARE_INTENTS:
                payload = {"utterance_id": utterance_id, "intent": result.intent}
                asker.publish(f"{BASE}/intent", json.dumps({**payload, "slots": result.slots}))
                answer = json.loads(asker.wait_for(f"{BASE}/response").payload)
                reply = str(answer["text"])
            else:
                said = [
                    e.text
                    for e in dialogue.handle(result, utterance_id, 0.0)
                    if isinstance(e, ReplyRequested)
                ]
                reply = said[0] if said else ""
            if reply:
                list(engine.synthesize(reply))
            spent = time.perf_counter() - began
            if result.intent == item.expect:
                right[item.kind] += 1
                latencies[item.kind].append((silence + spent + lead_in) * 1000.0)
    finally:
        asker.close()
        ha.close()
        broker.stop()
    out: dict[str, Any] = {}
    for kind, values in latencies.items():
        count = sum(i.kind == kind for i in interactions)
        out[kind] = {"understood_right": f"{right[kind]}/{count}", **percentiles(values)}
    return out
