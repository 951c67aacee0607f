"""10,000 malformed payloads on the incoming topics: no crash, no action, quiet logs."""

from __future__ import annotations

import contextlib
import json
import logging
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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
from tests.cli_support import REPO
from tests.mqtt_support import (
    Mosquitto,
    Probe,
    golden,
    have_mosquitto,
    make_link,
    run_config,
    running_broker,
)

BASE = "pocket_satellite/kitchen"
TOTAL = 10_000
TOPICS = sorted(INBOUND)
EXAMPLES = {
    spec["topic"]: spec["examples"]
    for spec in (
        golden(n)
        for n in ("say", "tts_request", "response", "slots", "control", "alert_ack", "enrol")
    )
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


def _surrogate(rng: random.Random, topic: str) -> bytes:
    """A string field with a lone surrogate escape (valid JSON, not valid text)."""
    example = dict(rng.choice(EXAMPLES[topic]))
    lone = rf"\u{rng.choice([0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xD83D]):04x}"
    text = json.dumps(example)
    quotes = [i for i, c in enumerate(text) if c == '"']
    at = rng.choice(quotes[1::2]) if quotes else 0  # just before a closing quote
    return (text[:at] + lone + text[at:]).encode()


GENERATORS: list[Callable[[random.Random, str], bytes]] = [
    _random_bytes,
    _wrong_type,
    _deep,
    _not_an_object,
    _extra_or_missing,
    _broken_json,
    _bad_utf8,
    _surrogate,
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
    # nothing was acted on: a rejected request with a usable id only learns why
    assert answered, "a rejected say or tts/request with an id gets its reason"
    for message in answered:
        data = json.loads(message.payload)
        assert data.get("status", "failed") == "failed" and data["error"], data
        assert not message.payload.startswith(b"RIFF")  # no audio was made
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
    # the requesters with an id learn why instead of waiting
    done = sender.wait_for(f"{BASE}/say/done").json()
    assert done["id"] == "s1" and done["status"] == "failed"
    assert "lone surrogate" in done["error"]
    failed = sender.wait_for(f"{BASE}/tts/response/r1").json()
    assert "lone surrogate" in failed["error"]
    link.stop()
    sender.close()
    assert inbox.empty()
    assert link.stats.rejected == dict.fromkeys(bad, 1)


# --- the running satellite ----------------------------------------------------------------

RUN_BASE = "pocket_satellite/pocket_satellite"  # the default satellite.id
ODD_TEXTS = [
    "\U0001f600 \U0001f4a1 emoji",
    "e\u0301\u0301\u0301 combining marks",
    "\u202eright to left override",
    "zero\u200bwidth\u200djoiners",
    "\x00\x07\x1b\x7f control characters",
    "  . , ; ! ?  ",
    "<speak>not <break/> SSML</speak>",
    "[[h@'loU]] espeak phonemes",
    "%s %n {0} {{}} $HOME `id`",
    "\ufeffbyte order mark",
    "\u0661\u0662\u0663 \u4f60\u597d \u0928\u092e\u0938\u094d\u0924\u0947",
    "\U0001d50f\U0001d522\U0001d529\U0001d529\U0001d52c",
    "line\r\nbreaks\n\n\ttabs",
    "a" * 3000,
    "word " * 700,
]


def _odd_valid_command(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """A command that passes validation but is odd: what the app itself must survive."""
    text = rng.choice(ODD_TEXTS)
    kind = rng.choice(["say", "say", "tts/request", "response", "control", "control"])
    if kind == "say":
        return kind, {
            "text": text,
            **({"id": f"s{rng.randrange(10**6)}"} if rng.random() < 0.5 else {}),
        }
    if kind == "tts/request":
        voice = rng.choice([None, "en-us", "no-such-voice", "x" * 64, "../../etc/passwd"])
        return kind, {"id": f"t{rng.randrange(10**6)}", "text": text[:400], "voice": voice}
    if kind == "response":
        return kind, {
            "utterance_id": f"u{rng.randrange(16**8):08x}-{rng.randint(1, 9)}",
            "text": text,
        }
    command = rng.choice(["mute", "unmute", "stop", "volume"])
    return kind, {"command": command, **({"volume": rng.random()} if command == "volume" else {})}


def _feed_silence(stdin: Any, stop: threading.Event) -> None:
    """Raw 16 kHz mono silence on the satellite's stdin, about in real time."""
    with contextlib.suppress(OSError, ValueError):
        while not stop.wait(0.1):
            stdin.write(b"\0" * 3200)
            stdin.flush()
        stdin.close()


@dataclass
class _Satellite:
    """A ``pocket-satellite run`` process fed silence on stdin; its stderr as it comes."""

    proc: subprocess.Popen[bytes]
    stderr: list[bytes]

    @property
    def log(self) -> str:
        return b"".join(self.stderr).decode("utf-8", "replace")


@contextlib.contextmanager
def _running_satellite(config: Path) -> Iterator[_Satellite]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "satellite", "run", "--config", str(config), "--input", "-"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        cwd=REPO,
    )
    satellite = _Satellite(proc, [])
    stop = threading.Event()
    feeder = threading.Thread(target=_feed_silence, args=(proc.stdin, stop), daemon=True)
    assert proc.stderr is not None
    reader = threading.Thread(target=satellite.stderr.extend, args=(proc.stderr,), daemon=True)
    feeder.start()
    reader.start()
    try:
        yield satellite
    finally:
        stop.set()  # the input ends: the satellite finishes and exits
        feeder.join(10)
        try:
            proc.wait(120)
        finally:
            proc.kill()
            reader.join(10)


def _leave_retained(probe: Probe, bad: list[tuple[str, bytes]]) -> None:
    """Junk and commands left retained on the broker before the satellite starts."""
    for topic, payload in bad:
        probe.client.publish(f"{RUN_BASE}/{topic}", payload, qos=1, retain=True)
    for n in range(5):
        retained_say = {"text": f"left over {n}", "id": f"retained{n}"}
        probe.publish(f"{RUN_BASE}/say", json.dumps(retained_say), retain=True)
    probe.publish(f"{RUN_BASE}/control", b'{"command": "mute"}', retain=True)


def test_the_running_satellite_survives_every_kind_of_bad_and_odd_command(
    broker: Mosquitto, tmp_path: Path
) -> None:
    """``pocket-satellite run`` against Mosquitto: malformed payloads on every inbound
    topic (some left retained before it starts), odd but valid commands (emoji, control
    characters, 3000 characters, unknown voices and utterances); it stays up, acts on no
    retained command, answers a marker, and ends cleanly with no traceback."""
    config = tmp_path / "satellite.yaml"
    config.write_text(run_config(broker.port, tmp_path), encoding="utf-8")
    rng = random.Random(21)
    bad = fuzz_cases(total=1500, seed=21)
    odd = [_odd_valid_command(rng) for _ in range(150)]
    watcher = Probe(broker.port, (f"{RUN_BASE}/status", f"{RUN_BASE}/say/done"))
    _leave_retained(watcher, bad[:200])
    answered: list[str] = []
    with _running_satellite(config) as satellite:
        assert watcher.wait_for(f"{RUN_BASE}/status", timeout=60).payload == b"online"
        for topic, payload in bad[200:]:
            watcher.client.publish(f"{RUN_BASE}/{topic}", payload, qos=1)
        for path, data in odd:
            watcher.client.publish(f"{RUN_BASE}/{path}", json.dumps(data), qos=1)
        watcher.publish(f"{RUN_BASE}/control", b'{"command": "unmute"}')
        watcher.publish(f"{RUN_BASE}/control", b'{"command": "stop"}')
        watcher.publish(f"{RUN_BASE}/say", b'{"text": "still here", "id": "marker"}')
        deadline = time.monotonic() + 120
        while "marker" not in answered and time.monotonic() < deadline:
            done = watcher.wait_for(f"{RUN_BASE}/say/done", timeout=deadline - time.monotonic())
            answered.append(done.json()["id"])
            if done.json()["id"] == "marker":
                assert done.json()["status"] == "done"
        assert satellite.proc.poll() is None, "the satellite died"
    watcher.close()
    log = satellite.log
    assert satellite.proc.returncode == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert "Unexpected error" not in log and "stopped by an unexpected" not in log
    assert not [i for i in answered if i.startswith("retained")], "a retained say acted"
    assert any(i.startswith("s") for i in answered)  # the odd says were spoken
    assert "Rejected MQTT payload" in log  # logged ...
    assert log.count("Rejected MQTT payload") <= 2 * len(TOPICS)  # ... rate-limited
