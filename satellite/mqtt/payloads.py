"""MQTT payloads as dataclasses: the schema of every JSON topic in the contract.

Inbound payloads (``say``, ``tts/request``, ``response``, ``slots``, ``control``) are
parsed strictly by :func:`decode_inbound`: UTF-8, at most ``max_bytes``, a JSON object
whose fields have exactly the declared types (the same checker as the events, see
:func:`satellite.events.fields_from_dict`), plus each payload's own range checks.
Outbound event payloads are an event's ``to_dict()`` plus an envelope: a unique ``id``
(consumers drop duplicates by it) and ``time`` (Unix seconds when it was published).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Self, cast

from ..audio.chunk import AudioChunk
from ..events import Event, EventDecodeError, event_from_dict, fields_from_dict, fields_to_dict
from ..stt.settings import SPEAKER_NAME

#: Largest incoming payload accepted, bytes (the contract's 64 KiB).
MAX_PAYLOAD_BYTES = 64 * 1024
#: Longest text to speak, characters.
MAX_TEXT_CHARS = 4000
#: Request ids end up in topic names, so only these characters are allowed.
_ID = re.compile(r"[A-Za-z0-9_\-]{1,64}")
#: A lone UTF-16 surrogate (JSON's unpaired ``\ud800`` escape): no UTF-8 for it exists.
_SURROGATE = re.compile("[\ud800-\udfff]")
CONTROL_COMMANDS = ("mute", "unmute", "stop", "volume", "wake_words")
ENROL_ACTIONS = ("start", "cancel")
#: How many sentences an enrolment by voice may ask for.
MIN_PROMPTS, MAX_PROMPTS = 5, 20
#: A wake word model id, as ``info.wake_words`` lists them.
_WAKE_WORD = re.compile(r"[a-z0-9_]{1,64}")
STATES = ("idle", "listening", "processing", "responding", "muted")


class PayloadError(EventDecodeError):
    """An MQTT payload is not valid for its topic."""


@dataclass(frozen=True)
class Payload:
    """Base of the JSON payloads; ``topic`` is the path under the satellite's base topic."""

    topic: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return fields_to_dict(self)

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON."""
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False).encode()

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Parse and check a decoded JSON object; raise PayloadError when invalid."""
        try:
            return fields_from_dict(cls, data, cls.topic or cls.__name__)
        except PayloadError:
            raise
        except EventDecodeError as err:
            raise PayloadError(str(err)) from None


def _unicode(where: str, value: str) -> None:
    found = _SURROGATE.search(value)
    if found is not None:
        raise PayloadError(
            f"{where}: holds a lone surrogate (\\u{ord(found.group()):04x} at character "
            f"{found.start()}), which is not text. Fix: send valid Unicode (escape a character "
            "outside the BMP as a surrogate pair, or as UTF-8)"
        )


def _text(where: str, value: str, allow_empty: bool = False) -> None:
    _unicode(where, value)
    if not value.strip() and not allow_empty:
        raise PayloadError(f"{where}: must not be empty")
    if len(value) > MAX_TEXT_CHARS:
        raise PayloadError(f"{where}: longer than {MAX_TEXT_CHARS} characters")


def check_request_id(where: str, value: str) -> None:
    """A request id ends up in a topic name: 1-64 of A-Z a-z 0-9 _ - (else PayloadError)."""
    if not _ID.fullmatch(value):
        raise PayloadError(f"{where}: must be 1-64 of A-Z a-z 0-9 _ -")


_request_id = check_request_id


# --- inbound ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SayRequest(Payload):
    """``say``: speak ``text``; when ``id`` is given, ``say/done`` reports that id. With
    ``preannounce`` a chime (the ``awake`` feedback sound) plays first."""

    topic: ClassVar[str] = "say"

    text: str
    id: str | None = None
    preannounce: bool = False

    def __post_init__(self) -> None:
        _text("say.text", self.text)
        if self.id is not None:
            _request_id("say.id", self.id)


@dataclass(frozen=True)
class TtsRequest(Payload):
    """``tts/request``: synthesise ``text``; the WAV goes to ``tts/response/<id>``."""

    topic: ClassVar[str] = "tts/request"

    id: str
    text: str
    voice: str | None = None

    def __post_init__(self) -> None:
        _request_id("tts/request.id", self.id)
        _text("tts/request.text", self.text)
        if self.voice is not None:
            if not 0 < len(self.voice) <= 64:
                raise PayloadError("tts/request.voice: must be 1-64 characters")
            _unicode("tts/request.voice", self.voice)


@dataclass(frozen=True)
class SpokenResponse(Payload):
    """``response``: Home Assistant's spoken answer to the intent of an utterance."""

    topic: ClassVar[str] = "response"

    utterance_id: str
    text: str

    def __post_init__(self) -> None:
        _request_id("response.utterance_id", self.utterance_id)
        _text("response.text", self.text, allow_empty=True)


@dataclass(frozen=True)
class Slots(Payload):
    """``slots`` (retained): names and areas of the entities HA exposes, for the grammar."""

    topic: ClassVar[str] = "slots"

    names: tuple[str, ...]
    areas: tuple[str, ...]

    def __post_init__(self) -> None:
        for value in (*self.names, *self.areas):
            if not 0 < len(value) <= 200:
                raise PayloadError("slots: every name and area must be 1-200 characters")
            _unicode("slots", value)


@dataclass(frozen=True)
class Control(Payload):
    """``control``: ``mute``, ``unmute``, ``stop``, ``volume`` (with ``volume`` 0-1) or
    ``wake_words`` (with ``wake_words``: the models to listen for, among ``info``'s)."""

    topic: ClassVar[str] = "control"

    command: str
    volume: float | None = None
    wake_words: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.command not in CONTROL_COMMANDS:
            raise PayloadError(f"control.command: must be one of {', '.join(CONTROL_COMMANDS)}")
        if self.command == "volume":
            if self.volume is None or not 0.0 <= self.volume <= 1.0:
                raise PayloadError("control.volume: give a number from 0 to 1 with 'volume'")
        elif self.volume is not None:
            raise PayloadError("control.volume: only allowed with the 'volume' command")
        if self.command == "wake_words":
            words = self.wake_words
            if not words or not all(_WAKE_WORD.fullmatch(w) for w in words):
                raise PayloadError(
                    "control.wake_words: give a list of wake word ids from info.wake_words"
                )
        elif self.wake_words is not None:
            raise PayloadError("control.wake_words: only allowed with the 'wake_words' command")


@dataclass(frozen=True)
class EnrolRequest(Payload):
    """``enrol``: learn ``speaker``'s voice by voice (``action`` ``start``: the satellite
    says ``prompts`` sentences, 5-20, and the person says each back; see
    satellite/enrol/prompted.py), or ``cancel`` an enrolment under way."""

    topic: ClassVar[str] = "enrol"

    action: str
    speaker: str | None = None
    prompts: int | None = None

    def __post_init__(self) -> None:
        if self.action not in ENROL_ACTIONS:
            raise PayloadError(f"enrol.action: must be one of {', '.join(ENROL_ACTIONS)}")
        if self.action == "start" and (
            self.speaker is None or not re.fullmatch(SPEAKER_NAME, self.speaker)
        ):
            raise PayloadError(
                "enrol.speaker: give the speaker's name (letters, digits, - and _, at most "
                "40, starting with a letter or digit) with 'start'"
            )
        if self.prompts is not None and not MIN_PROMPTS <= self.prompts <= MAX_PROMPTS:
            raise PayloadError(f"enrol.prompts: give {MIN_PROMPTS} to {MAX_PROMPTS}")


@dataclass(frozen=True)
class AlertAck(Payload):
    """``alert/ack``: Home Assistant fired the event of the open alert ``id``; close it.

    Handled by the link itself (it never reaches the frame loop's inbox)."""

    topic: ClassVar[str] = "alert/ack"

    id: str

    def __post_init__(self) -> None:
        _request_id("alert/ack.id", self.id)


@dataclass(frozen=True)
class PlayRequest:
    """``play/<id>`` (binary, see media.py): a WAV to play, e.g. a media announcement;
    ``say/done`` reports the id when it has played."""

    id: str
    audio: AudioChunk


#: The JSON commands (decode_inbound); with ``play/<id>`` (media.py) every command.
JsonCommand = SayRequest | TtsRequest | SpokenResponse | Slots | Control | AlertAck | EnrolRequest
Command = JsonCommand | PlayRequest

INBOUND: dict[str, type[Payload]] = {
    cls.topic: cls
    for cls in (SayRequest, TtsRequest, SpokenResponse, Slots, Control, AlertAck, EnrolRequest)
}


def decode_inbound(topic: str, raw: bytes, max_bytes: int = MAX_PAYLOAD_BYTES) -> JsonCommand:
    """Parse a payload received on inbound ``topic`` (the path under the base topic).

    Raises PayloadError for an unknown topic, an oversized or non-UTF-8 payload, bad
    JSON (including NaN, huge numbers and nesting too deep to parse) or a schema error.
    """
    cls = INBOUND.get(topic)
    if cls is None:
        raise PayloadError(f"{topic}: not an inbound topic")
    if len(raw) > max_bytes:
        raise PayloadError(f"{topic}: payload of {len(raw)} bytes is over {max_bytes}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PayloadError(f"{topic}: payload is not UTF-8") from None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise PayloadError(f"{topic}: JSON nested too deeply") from None
    except ValueError as err:  # JSONDecodeError, NaN/Infinity, over-long integers
        raise PayloadError(f"{topic}: invalid JSON ({err})") from None
    return cast(JsonCommand, cls.from_dict(data))


def rejection_answer(topic: str, raw: bytes, why: str) -> tuple[str, bytes] | None:
    """What tells the requester of a rejected ``say`` or ``tts/request`` why, instead of
    letting it wait: (path, payload) of a failed ``say/done`` or ``tts/response/<id>``;
    None when the payload names no usable id (or is another topic's)."""
    if topic not in (SayRequest.topic, TtsRequest.topic) or len(raw) > MAX_PAYLOAD_BYTES:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    request_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(request_id, str) or not _ID.fullmatch(request_id):
        return None
    if topic == TtsRequest.topic:
        return f"tts/response/{request_id}", TtsFailed(request_id, why).to_json()
    return SayDone.topic, SayDone(request_id, "failed", why).to_json()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


# --- outbound ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Info(Payload):
    """``info`` (retained): who this satellite is and what it can do."""

    topic: ClassVar[str] = "info"

    id: str
    name: str
    version: str
    language: str
    wake_words: tuple[str, ...]
    voices: tuple[str, ...]
    capabilities: tuple[str, ...]
    protocol: int = 1
    #: The room it stands in (``satellite.area``): Home Assistant's suggested area.
    area: str | None = None
    #: Entity names and areas the speech grammar holds, and when it was built (Unix
    #: seconds); None when not known yet.
    grammar_names: int | None = None
    grammar_areas: int | None = None
    grammar_built: float | None = None


@dataclass(frozen=True)
class SayDone(Payload):
    """``say/done``: the ``say`` with this id finished (``done``), was ``stopped`` or failed."""

    topic: ClassVar[str] = "say/done"

    id: str
    status: str
    error: str | None = None


@dataclass(frozen=True)
class TtsFailed(Payload):
    """``tts/response/<id>`` when synthesis failed (a WAV, starting ``RIFF``, otherwise)."""

    topic: ClassVar[str] = "tts/response"

    id: str
    error: str


@dataclass(frozen=True)
class Envelope(Payload):
    """What an outbound event payload carries besides the event's own fields."""

    id: str
    time: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.time):
            raise PayloadError("time: must be a finite number")


ENVELOPE_KEYS = frozenset({"id", "time"})


def encode_event(event: Event, envelope: Envelope, redact: tuple[str, ...] = ()) -> bytes:
    """The JSON payload of an event: its dict plus ``id`` and ``time``; the fields in
    ``redact`` are emptied (what was said, when transcripts are not to be published)."""
    data = {**event.to_dict(), **envelope.to_dict()}
    for name in redact:
        if name in data:
            data[name] = ""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def decode_event(raw: bytes | dict[str, Any]) -> tuple[Envelope, Event]:
    """Split an event payload into its envelope and the event (for consumers and tests)."""
    data = json.loads(raw) if isinstance(raw, bytes) else raw
    if not isinstance(data, dict):
        raise PayloadError("an event payload must be a JSON object")
    envelope = Envelope.from_dict({k: data.get(k) for k in ENVELOPE_KEYS})
    event = event_from_dict({k: v for k, v in data.items() if k not in ENVELOPE_KEYS})
    return envelope, event
