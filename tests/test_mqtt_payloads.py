"""MQTT payloads, routes, golden files, settings and the outbox (no broker needed)."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import importlib
import io
import json
import logging
import pkgutil
import typing
import wave
from pathlib import Path
from typing import Any

import pytest
import voluptuous as vol

import satellite
from satellite.events import (
    EventDecodeError,
    StateChanged,
    WakeDetected,
    event_classes,
    fields_from_dict,
)
from satellite.mqtt import payloads
from satellite.mqtt.client import backoff_delay
from satellite.mqtt.discovery import component_configured
from satellite.mqtt.media import decode_play
from satellite.mqtt.outbox import Outbox
from satellite.mqtt.payloads import (
    INBOUND,
    Control,
    Envelope,
    Info,
    PayloadError,
    SayDone,
    SayRequest,
    Slots,
    TtsFailed,
    TtsRequest,
    decode_event,
    decode_inbound,
    encode_event,
)
from satellite.mqtt.ratelimit import RateLimitedLog
from satellite.mqtt.settings import MqttCredentialsError, MqttSettings
from satellite.mqtt.topics import ROUTES, Topics
from tests.mqtt_support import golden_files

GOLDEN = golden_files()


def _import_all() -> None:
    """Register every event class the satellite defines (some packages are optional)."""
    for module in pkgutil.walk_packages(satellite.__path__, "satellite."):
        if not module.name.endswith("__main__"):
            with contextlib.suppress(ImportError):
                importlib.import_module(module.name)


_import_all()


# --- golden files: the contract both sides load ----------------------------------------


def test_every_route_and_inbound_topic_has_a_golden_file() -> None:
    topics = {g["topic"] for g in GOLDEN.values()}
    assert {r.topic for r in ROUTES.values()} <= topics
    assert set(INBOUND) <= topics
    assert {"status", "info", "say/done", "tts/response/{id}"} <= topics


@pytest.mark.parametrize(
    "name", sorted(n for n, g in GOLDEN.items() if g["direction"] == "in" and g["topic"] in INBOUND)
)
def test_inbound_golden_examples_decode_and_round_trip(name: str) -> None:
    spec = GOLDEN[name]
    for example in spec["examples"]:
        raw = json.dumps(example).encode()
        command = decode_inbound(spec["topic"], raw)
        assert command.to_dict() == {**_defaults(type(command)), **example}
        assert decode_inbound(spec["topic"], command.to_json()) == command


def _defaults(cls: type[Any]) -> dict[str, Any]:
    return {
        f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING
    }


@pytest.mark.parametrize(
    "name", sorted(n for n, g in GOLDEN.items() if g["topic"] in {r.topic for r in ROUTES.values()})
)
def test_event_golden_examples_match_their_route_and_class(name: str) -> None:
    spec = GOLDEN[name]
    for example in spec["examples"]:
        type_name = example["type"]
        route = ROUTES[type_name]
        assert route.topic == spec["topic"]
        assert (route.qos, route.retain) == (spec["qos"], spec["retain"])
        Envelope.from_dict({k: example[k] for k in ("id", "time")})
        if type_name not in event_classes():
            pytest.skip(f"event type {type_name!r} is not defined yet (another issue)")
        envelope, event = decode_event(example)
        assert json.loads(encode_event(event, envelope)) == example


def test_the_component_golden_example_turns_discovery_off() -> None:
    (example,) = GOLDEN["component"]["examples"]
    assert component_configured(json.dumps(example).encode())
    assert not component_configured(b"")  # the retained message cleared
    assert not component_configured(b"{not json")
    assert not component_configured(b'{"configured": "yes"}')


def test_other_outbound_golden_examples() -> None:
    assert GOLDEN["status"]["examples"] == ["online", "offline"]
    (info,) = GOLDEN["info"]["examples"]
    assert Info.from_dict(info).to_dict() == info
    for example in GOLDEN["say_done"]["examples"]:
        assert SayDone.from_dict(example).to_dict() == {"error": None, **example}
    wav = base64.b64decode(GOLDEN["tts_response"]["examples"][0])
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"
    for example in GOLDEN["tts_response"]["error_examples"]:
        assert TtsFailed.from_dict(example).to_dict() == example


# --- inbound validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic", "raw", "why"),
    [
        ("say", b'{"text": ""}', "empty"),
        ("say", b'{"text": 5}', "expected str"),
        ("say", b'{"text": "hi", "id": "a/b"}', "1-64"),
        ("say", b'{"text": "hi", "extra": 1}', "unknown fields"),
        ("say", b"[1, 2]", "JSON object"),
        ("say", b"\xff\xfe", "UTF-8"),
        ("say", b'{"text": NaN}', "invalid JSON"),
        ("say", b'{"text": "x"' + b" " * 70000 + b"}", "over 65536"),
        ("say", b"[" * 50000 + b"]" * 50000, "over"),
        ("control", b"[" * 30000 + b"]" * 30000, "nested"),
        ("control", b'{"command": "volume"}', "0 to 1"),
        ("control", b'{"command": "volume", "volume": true}', "boolean"),
        ("control", b'{"command": "mute", "volume": 0.5}', "only allowed"),
        ("control", b'{"command": "explode"}', "one of"),
        ("control", b'{"command": "wake_words"}', "list of wake word ids"),
        ("control", b'{"command": "wake_words", "wake_words": []}', "list of wake word ids"),
        ("control", b'{"command": "wake_words", "wake_words": ["Okay Nabu"]}', "wake word ids"),
        ("control", b'{"command": "stop", "wake_words": ["alexa"]}', "only allowed"),
        ("tts/request", b'{"id": "+", "text": "hi"}', "1-64"),
        ("tts/request", b'{"id": "a", "text": "hi", "voice": ""}', "voice"),
        ("slots", b'{"names": ["a", 1], "areas": []}', "list of strings"),
        ("slots", b'{"names": [""], "areas": []}', "1-200"),
        ("response", b'{"utterance_id": "u1"}', "missing field"),
        ("response", b'{"utterance_id": "u1", "text": "' + b"9" * 5000 + b'"}', "longer"),
        ("say", b'{"text": ' + b"9" * 5000 + b"}", "invalid JSON"),
        ("state", b'{"state": "idle"}', "not an inbound topic"),
        ("say", rb'{"text": "a\ud800b"}', "lone surrogate"),
        ("tts/request", rb'{"id": "r1", "text": "\udfff"}', "lone surrogate"),
        ("tts/request", rb'{"id": "r1", "text": "hi", "voice": "\ud800"}', "lone surrogate"),
        ("response", rb'{"utterance_id": "u1", "text": "ok \ud83d"}', "lone surrogate"),
        ("slots", rb'{"names": ["lamp \udc00"], "areas": []}', "lone surrogate"),
    ],
)
def test_bad_inbound_payloads_are_rejected(topic: str, raw: bytes, why: str) -> None:
    with pytest.raises(PayloadError, match=why):
        decode_inbound(topic, raw)


def test_a_surrogate_pair_is_text_and_accepted() -> None:
    assert decode_inbound("say", rb'{"text": "\ud83d\ude00 hello"}') == SayRequest(
        "\U0001f600 hello"
    )


def _wav(width: int = 2, channels: int = 1, rate: int = 16000, frames: int = 160) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setsampwidth(width)
        writer.setnchannels(channels)
        writer.setframerate(rate)
        writer.writeframes(b"\x01\x00" * (frames * channels * width // 2))
    return buffer.getvalue()


def test_the_play_golden_example_decodes() -> None:
    spec = GOLDEN["play"]
    (wav,) = (base64.b64decode(e) for e in spec["examples"])
    (request_id,) = spec["example_ids"]
    play = decode_play(request_id, wav)
    assert play.id == request_id
    assert (play.audio.rate_hz, play.audio.channels, play.audio.seconds) == (16000, 1, 0.05)


@pytest.mark.parametrize(
    ("request_id", "payload", "why"),
    [
        ("a/b", _wav(), "1-64"),
        ("p1", b"ID3\x04 an mp3", "not a WAV file"),
        ("p1", _wav(channels=2), "2 channel"),
        ("p1", _wav(width=1), "8-bit"),
        ("p1", _wav(rate=96000), "8-48 kHz"),
        ("p1", _wav(frames=0), "no audio"),
        ("p1", _wav()[:30], "unreadable"),
        ("p1", _wav(frames=3_000_000), "over"),
    ],
)
def test_bad_play_payloads_are_rejected(request_id: str, payload: bytes, why: str) -> None:
    with pytest.raises(PayloadError, match=why):
        decode_play(request_id, payload)


def test_good_inbound_payloads() -> None:
    assert decode_inbound("say", b'{"text": "hi"}') == SayRequest("hi")
    assert decode_inbound("control", b'{"command": "volume", "volume": 1}') == Control(
        "volume", 1.0
    )
    assert decode_inbound("tts/request", '{"id": "r1", "text": "ça va"}'.encode()) == (
        TtsRequest("r1", "ça va")
    )
    assert decode_inbound("slots", b'{"names": [], "areas": ["Kitchen"]}') == Slots(
        (), ("Kitchen",)
    )


def test_every_payload_field_uses_a_checked_type() -> None:
    checked = {"str", "int", "float", "bool", "str | None", "float | None", "int | None"}
    for cls in [*INBOUND.values(), Info, SayDone, TtsFailed, Envelope]:
        for name, hint in typing.get_type_hints(cls).items():
            if name == "topic":
                continue
            text = hint.__name__ if isinstance(hint, type) else str(hint)
            assert text in checked or text.startswith("tuple[str"), (cls, name, text)
    assert payloads.MAX_PAYLOAD_BYTES == 64 * 1024


def test_shared_field_decoder_reports_where() -> None:
    with pytest.raises(EventDecodeError, match="here: missing field 'text'"):
        fields_from_dict(SayRequest, {}, "here")
    with pytest.raises(EventDecodeError, match="here: expected a JSON object"):
        fields_from_dict(SayRequest, "text", "here")


def test_event_envelope_round_trip() -> None:
    event = WakeDetected(1.5, "Okay Nabu", "okay_nabu", 0.9)
    raw = encode_event(event, Envelope("abc", 12.5))
    assert json.loads(raw)["type"] == "wake_detected"
    assert decode_event(raw) == (Envelope("abc", 12.5), event)
    with pytest.raises(PayloadError):
        decode_event(encode_event(event, Envelope("abc", 1.0)).replace(b'"id"', b'"ix"'))


def test_topics() -> None:
    topics = Topics("pocket_satellite", "kitchen")
    assert topics.inbound_path("pocket_satellite/kitchen/tts/request") == "tts/request"
    assert topics.inbound_path("pocket_satellite/other/say") is None
    assert topics.inbound_path("pocket_satellite/kitchen/state") is None
    assert topics.tts_response("r1") == "pocket_satellite/kitchen/tts/response/r1"
    assert topics.ha_status == "homeassistant/status"
    assert ROUTES["intent"].durable and ROUTES["alert"].durable
    assert not ROUTES["state_changed"].durable and ROUTES["transcript"].private


# --- settings ---------------------------------------------------------------------------


def test_settings_validate_like_the_rest_of_the_config(tmp_path: Path) -> None:
    schema = vol.Schema(MqttSettings.schema())
    settings = MqttSettings.from_validated(schema({"host": "broker.lan", "tls": True}))
    assert settings.effective_port == 8883 and settings.use_tls
    assert MqttSettings().effective_port == 1883
    with pytest.raises(vol.Invalid, match="Fix"):
        schema({"port": 70000})
    with pytest.raises(vol.Invalid, match="Fix"):
        schema({"discovery_prefix": "home assistant"})
    assert all(f.metadata["doc"] for f in dataclasses.fields(MqttSettings))


def test_password_file(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("s3cret\nignored\n")
    assert MqttSettings(password="x", password_file=str(secret)).read_password() == "s3cret"
    assert MqttSettings(password="x").read_password() == "x"
    with pytest.raises(MqttCredentialsError, match="password_file"):
        MqttSettings(password_file=str(tmp_path / "missing")).read_password()


# --- outbox -----------------------------------------------------------------------------


def test_outbox_keeps_order_across_reopen_and_drops_oldest_counted(tmp_path: Path) -> None:
    path = tmp_path / "outbox.sqlite3"
    box = Outbox(path, max_messages=5)
    seqs = [box.append("t", f"m{i}".encode())[0].seq for i in range(4)]
    box.remove(seqs[1])
    box.close()
    box = Outbox(path, max_messages=5)
    assert [m.payload for m in box.messages()] == [b"m0", b"m2", b"m3"]
    dropped: list[int] = []
    for i in range(4, 8):
        dropped += box.append("t", f"m{i}".encode())[1]
    assert dropped == [seqs[0], seqs[2]]
    assert [m.payload for m in box.messages()] == [b"m3", b"m4", b"m5", b"m6", b"m7"]
    assert (len(box), box.dropped_total, box.appended_total) == (5, 2, 8)
    with box.batch():
        box.append("t", b"m8")
        box.remove(box.messages()[0].seq)
    assert len(box) == 4
    with pytest.raises(RuntimeError), box.batch():
        box.append("t", b"rolled back")
        raise RuntimeError
    assert len(box) == 4 and box.messages()[-1].payload == b"m8"
    box.close()


def test_outbox_on_an_unwritable_path_names_the_setting(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(Exception, match=r"mqtt\.outbox_path"):
        Outbox(blocker / "outbox.sqlite3", 10)


# --- rate-limited logging ---------------------------------------------------------------


def test_rate_limited_log_summarises(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    log = RateLimitedLog(logging.getLogger("test.rl"), 60.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "test.rl"):
        for _ in range(100):
            log.report("k", "bad %s", "x")
        now[0] = 61.0
        log.report("k", "bad %s", "y")
        log.report("other", "other")
    assert [r.getMessage() for r in caplog.records] == [
        "bad x",
        "bad y (99 more like this since the last report)",
        "other",
    ]


def test_state_changed_is_the_state_payload() -> None:
    (example, *_) = GOLDEN["state"]["examples"]
    _, event = decode_event(example)
    assert isinstance(event, StateChanged) and event.state in payloads.STATES


def test_backoff_doubles_to_the_ceiling_with_jitter() -> None:
    settings = MqttSettings(reconnect_min_seconds=1.0, reconnect_max_seconds=60.0)
    top = [backoff_delay(settings, n, lambda low, high: high) for n in range(10)]
    assert top == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0, 60.0]
    assert backoff_delay(settings, 3, lambda low, high: low) == 4.0
    assert backoff_delay(settings, 1000, lambda low, high: high) == 60.0


def test_a_rejected_request_with_an_id_is_answered_with_the_reason() -> None:
    path, body = payloads.rejection_answer("tts/request", b'{"id": "r7", "text": 5}', "why") or (
        "",
        b"",
    )
    assert path == "tts/response/r7"
    assert json.loads(body) == {"id": "r7", "error": "why"}
    path, body = payloads.rejection_answer("say", b'{"id": "s7", "text": ""}', "empty") or ("", b"")
    assert path == "say/done"
    assert json.loads(body) == {"id": "s7", "status": "failed", "error": "empty"}
    for topic, raw in [
        ("say", b'{"text": ""}'),  # no id: nobody to tell
        ("say", b'{"id": "a/b", "text": ""}'),  # an id that cannot be a topic
        ("say", b"[" * 5000),
        ("say", b"\xff"),
        ("control", b'{"id": "c1", "command": "x"}'),  # not a request
    ]:
        assert payloads.rejection_answer(topic, raw, "why") is None
