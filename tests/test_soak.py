"""The short soak (bench/soak.py) in CI: ``run`` fed sessions as fast as it takes them for
two minutes while the broker restarts every 10 s (by turns stopped and kill -9'd), a
stage raises every 20 s, a malformed message arrives every second and the speaker stalls
every 15 s. Nothing may crash and no QoS 1 event may be lost. (The hour-long run is
``python -m bench.soak --minutes 60``; its numbers are in the README.)"""

from __future__ import annotations

import argparse

import pytest

from bench.soak import soak
from tests.mqtt_support import have_mosquitto

pytestmark = [
    pytest.mark.skipif(not have_mosquitto(), reason="needs mosquitto"),
    pytest.mark.usefixtures("need_espeak", "need_flite"),
]


def test_a_short_soak_loses_nothing_and_never_crashes() -> None:
    args = argparse.Namespace(
        minutes=2.0, restart_every=10.0, fault_every=20.0, stall_every=15.0, llm=False
    )
    result = soak(args)
    assert result["crashes"] == 0, result["crash_exit_codes"]
    assert result["final_exit_code"] == 0
    assert result["broker_restarts"] >= 10
    assert result["malformed_sent"] >= 100
    assert result["qos1_events_sent"] >= 20  # intents, help requests, alerts
    assert result["qos1_events_lost"] == 0, result["lost_examples"]
    # the injected faults were reported as stage errors and the loop went on
    assert result["stage_errors_counted"] >= 3
    assert result["rss_mb"]["max"] < 600
