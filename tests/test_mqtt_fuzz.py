"""10,000 malformed payloads on the incoming topics: no crash, no action, quiet logs."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from satellite.mqtt.payloads import (
    INBOUND,
    Control,
    PayloadError,
    SayRequest,
    Slots,
    decode_inbound,
)
from tests.mqtt_support import Mosquitto, Probe, golden, have_mosquitto, make_link, running_broker

BASE = "pocket_satellite/kitchen"
TOTAL = 10_000
TOPICS = sorted(INBOUND)
EXAMPLES = {
    spec["topic"]: spec["examples"]
    for spec in (golden(n) for n in ("say", "tts_request", "response", "slots", "control"))
}
_ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    1e308,
    "",
    "x" * 5000,
    [],
    [1, "a"],
    {},
    {"a": {"b": [None]}},
    "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
    "a/b+#",
    -0.0,
]


def _random_bytes(rng: random.Random, topic: str) -> bytes:
    return rng.randbytes(rng.randint(0, 300))


def _huge(rng: random.Random, topic: str) -> bytes:
    example = dict(rng.choice(EXAMPLES[topic]))
    key = next(iter(example))
    example[key] = "x" * (64 * 1024 + rng.randint(1, 4096))
    return json.dumps(example).encode()


def _wrong_type(rng: random.Random, topic: str) -> bytes:
    example = dict(rng.choice(EXAMPLES[topic]))
    key = rng.choice(sorted(example))
    example[key] = rng.choice([v for v in _ODD_VALUES if type(v) is not type(example[key])])
    return json.dumps(example).encode()


def _deep(rng: random.Random, topic: str) -> bytes:
    depth = rng.choice([64, 1000, 5000, 20000])
    if rng.random() < 0.5:
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


def _not_an_object(rng: random.Random, topic: str) -> bytes:
    return json.dumps(rng.choice([[], [1, 2], 3, "say", None, True, 1.5])).encode()


def _extra_or_missing(rng: random.Random, topic: str) -> bytes:
    example = dict(rng.choice(EXAMPLES[topic]))
    if rng.random() < 0.5:
        example[f"extra{rng.randint(0, 99)}"] = 1
    else:
        example.pop(rng.choice(sorted(example)))
        example.pop("volume", None)  # 'volume' alone would still be a valid volume command
    return json.dumps(example).encode()


def _broken_json(rng: random.Random, topic: str) -> bytes:
    text = json.dumps(rng.choice(EXAMPLES[topic]))
    cut = rng.randint(0, max(0, len(text) - 2))
    return rng.choice(
        [
            text[:cut],
            text.replace(":", "=", 1),
            "NaN",
            '{"text": Infinity}',
            text + ",",
            "\ufeff" + text,
        ]
    ).encode()


def _bad_utf8(rng: random.Random, topic: str) -> bytes:
    text = json.dumps(rng.choice(EXAMPLES[topic])).encode()
    at = rng.randint(0, len(text))
    return text[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + text[at:]


GENERATORS: list[Callable[[random.Random, str], bytes]] = [
    _random_bytes,
    _wrong_type,
    _deep,
    _not_an_object,
    _extra_or_missing,
    _broken_json,
    _bad_utf8,
]


def fuzz_cases(total: int = TOTAL, seed: int = 6) -> list[tuple[str, bytes]]:
    """(topic path, payload) pairs, each of which the decoder must reject."""
    rng = random.Random(seed)
    cases: list[tuple[str, bytes]] = []
    while len(cases) < total:
        topic = TOPICS[len(cases) % len(TOPICS)]
        make = _huge if rng.random() < 0.01 else rng.choice(GENERATORS)
        payload = make(rng, topic)
        try:
            decode_inbound(topic, payload)
        except PayloadError:
            cases.append((topic, payload))
        # A generator can stumble on a valid payload (e.g. an 'extra' key removed again);
        # those are not fuzz cases. Any other exception fails the test right here.
    return cases


def test_decoder_rejects_every_case_with_payload_error() -> None:
    cases = fuzz_cases()
    assert len(cases) == TOTAL
    kinds = {payload[:1] for _, payload in cases}
    assert len(kinds) > 20  # varied, not one shape repeated
    assert sum(len(p) > 64 * 1024 for _, p in cases) >= 50


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    if not have_mosquitto():
        pytest.skip("mosquitto is not installed")
    with running_broker(tmp_path / "broker") as running:
        yield running


def test_ten_thousand_bad_payloads_through_the_broker(
    broker: Mosquitto, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    link, inbox = make_link(broker.port, tmp_path / "outbox")
    sender = Probe(broker.port, (f"{BASE}/say/done", f"{BASE}/tts/response/#"))
    cases = fuzz_cases()
    with caplog.at_level(logging.WARNING, "satellite.mqtt"):
        link.start()
        assert link.connected.wait(10)
        infos = [
            sender.client.publish(f"{BASE}/{topic}", payload, qos=1) for topic, payload in cases
        ]
        for info in infos:
            info.wait_for_publish(30)
        # A valid command after the storm proves the link is alive and saw everything.
        sender.publish(f"{BASE}/say", b'{"text": "still here", "id": "marker"}')
        assert inbox.get(timeout=30) == SayRequest("still here", "marker")
        answered = sender.drain(0.3)
        link.stop()
    sender.close()
    assert inbox.empty(), "a malformed payload was acted on"
    assert sum(link.stats.rejected.values()) == TOTAL
    assert set(link.stats.rejected) == set(TOPICS)
    assert link.stats.accepted == 1
    assert answered == []  # no tts/response, no say/done: nothing was acted on
    rejections = [r for r in caplog.records if "Rejected" in r.getMessage()]
    assert 1 <= len(rejections) <= len(TOPICS), "rejections must be rate-limited"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_retained_commands_are_never_acted_on(
    broker: Mosquitto, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A retained mute (or say, response, tts/request) left on the broker would act again
    at every restart: the link rejects and counts each, and takes the retained slots."""
    sender = Probe(broker.port, (f"{BASE}/say/done",))
    acting = {
        "control": b'{"command": "mute"}',
        "say": b'{"text": "left over"}',
        "response": b'{"utterance_id": "u1", "text": "left over"}',
        "tts/request": b'{"id": "r1", "text": "left over"}',
    }
    for path, payload in acting.items():
        sender.publish(f"{BASE}/{path}", payload, retain=True)
    sender.publish(f"{BASE}/slots", b'{"names": ["lamp"], "areas": []}', retain=True)
    with caplog.at_level(logging.WARNING, "satellite.mqtt"):
        for restart in range(2):  # the same after a restart
            link, inbox = make_link(broker.port, tmp_path / f"outbox{restart}")
            link.start()
            assert link.connected.wait(10)
            assert inbox.get(timeout=10) == Slots(("lamp",), ())
            # the same command live (not retained) is taken
            sender.publish(f"{BASE}/control", b'{"command": "unmute"}')
            assert inbox.get(timeout=10) == Control("unmute")
            link.stop()
            assert inbox.empty(), "a retained command was acted on"
            assert link.stats.rejected == dict.fromkeys(acting, 1)
    sender.close()
    retained = [r for r in caplog.records if "retained command" in r.getMessage()]
    assert len(retained) == 2 * len(acting)  # one line per topic and start, with the fix
    assert all("Fix:" in r.getMessage() for r in retained)


def test_lone_surrogates_through_the_broker_are_rejected_and_counted(
    broker: Mosquitto, tmp_path: Path
) -> None:
    link, inbox = make_link(broker.port, tmp_path / "outbox")
    sender = Probe(broker.port, (f"{BASE}/say/done", f"{BASE}/tts/response/#"))
    link.start()
    assert link.connected.wait(10)
    bad = {
        "say": rb'{"text": "a\ud800", "id": "s1"}',
        "tts/request": rb'{"id": "r1", "text": "\ud800"}',
        "response": rb'{"utterance_id": "u1", "text": "\ud800"}',
    }
    for path, payload in bad.items():
        sender.publish(f"{BASE}/{path}", payload)
    sender.publish(f"{BASE}/say", b'{"text": "still here", "id": "marker"}')
    assert inbox.get(timeout=10) == SayRequest("still here", "marker")
    link.stop()
    sender.close()
    assert inbox.empty()
    assert link.stats.rejected == dict.fromkeys(bad, 1)
