"""``info`` says what the speech grammar holds, and is published again after Home
Assistant's names rebuilt it: ``run`` against a real Mosquitto."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli_support import LiveRun
from tests.mqtt_support import Probe, have_mosquitto, run_config, running_broker

pytestmark = pytest.mark.skipif(not have_mosquitto(), reason="needs mosquitto")
INFO = "pocket_satellite/+/info"


def _next_info(probe: Probe, feed: Any, wanted: Any, seconds: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        feed()
        while not probe.messages.empty():
            message = probe.messages.get()
            if message.topic.endswith("/info"):
                info = json.loads(message.payload)
                if wanted(info):
                    return dict(info)
    raise AssertionError("no such info in time")


def _knows_its_grammar(info: dict[str, Any]) -> bool:
    return info.get("grammar_names") is not None


def test_info_tells_what_the_grammar_holds_and_follows_ha_s_names(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker") as broker:
        config = tmp_path / "satellite.yaml"
        config.write_text(run_config(broker.port, tmp_path) + "llm:\n  enabled: false\n")
        probe = Probe(broker.port, (INFO,))
        try:
            with LiveRun(config) as satellite:
                first = _next_info(probe, satellite.feed, _knows_its_grammar)
                assert first["grammar_names"] > 0 and first["grammar_built"] > 1.7e9
                slots = {"names": ["Reading Lamp", "Hall Light", "Porch Light"], "areas": ["Hall"]}
                topic = first["id"].join(("pocket_satellite/", "/slots"))
                probe.publish(topic, json.dumps(slots), retain=True)
                rebuilt = _next_info(probe, satellite.feed, lambda i: i.get("grammar_names") == 3)
                assert rebuilt["grammar_built"] > first["grammar_built"]
                assert rebuilt["grammar_areas"] >= 1
                assert satellite.finish() == 0
                err = satellite.stderr()
                assert "Traceback" not in err, err
        finally:
            probe.close()
