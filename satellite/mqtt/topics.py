"""Topic names and the table that routes each event type to its topic.

A new event type is published by adding a row to :data:`ROUTES`; an event type with no
row stays on the device (logged once at debug level).
"""

from __future__ import annotations

from dataclasses import dataclass

from .payloads import INBOUND

STATUS = "status"
INFO = "info"
#: Retained by the Home Assistant component while it is configured for this satellite.
COMPONENT = "component"
STATE = "state"
SAY_DONE = "say/done"
TTS_RESPONSE = "tts/response"
ALERT_ACTIVE = "alert/active"
ONLINE = "online"
OFFLINE = "offline"
HA_STATUS_TOPIC_SUFFIX = "status"
INBOUND_TOPICS = tuple(INBOUND)


@dataclass(frozen=True)
class Route:
    """Where an event type is published.

    ``qos`` 1 events that are not retained go through the on-disk outbox, so they
    survive a broker outage and a restart of the satellite. ``private`` events are only
    published when ``mqtt.publish_transcripts`` is on.
    """

    topic: str
    qos: int = 0
    retain: bool = False
    private: bool = False
    #: Fields emptied ("") unless ``mqtt.publish_transcripts`` is on (what was said).
    redact: tuple[str, ...] = ()

    @property
    def durable(self) -> bool:
        """True when the event goes through the outbox (QoS 1, not retained)."""
        return self.qos >= 1 and not self.retain


#: Event type name -> route. Types without a row stay on the device (playback events).
#: Actions (satellite/actions.py) are not events and never reach the link: Home
#: Assistant carries out the HA intents it finds on ``intent``.
ROUTES: dict[str, Route] = {
    "state_changed": Route(STATE, qos=1, retain=True),
    "wake_detected": Route("event/wake"),
    "speech_started": Route("event/speech_started"),
    "utterance_ended": Route("event/utterance_ended"),
    "listening_timeout": Route("event/listening_timeout"),
    "stage_error": Route("error"),
    "intent": Route("intent", qos=1, redact=("text",)),
    "help_requested": Route("help", qos=1, redact=("text",)),
    "transcript": Route("transcript", private=True),
    "prosody": Route("prosody"),
    "alert": Route("alert", qos=1),
    "alert_cleared": Route("alert/cleared", qos=1),
    "enrolment": Route("enrolment", qos=1),
}


@dataclass(frozen=True)
class Topics:
    """The full topic names of one satellite."""

    base_topic: str
    satellite_id: str
    discovery_prefix: str = "homeassistant"

    @property
    def base(self) -> str:
        """``<base_topic>/<satellite id>``."""
        return f"{self.base_topic}/{self.satellite_id}"

    def full(self, path: str) -> str:
        """The full name of a topic under the base."""
        return f"{self.base}/{path}"

    def inbound_path(self, topic: str) -> str | None:
        """The path under the base of an inbound topic of this satellite, else None."""
        prefix = self.base + "/"
        if not topic.startswith(prefix):
            return None
        path = topic[len(prefix) :]
        return path if path in INBOUND else None

    @property
    def ha_status(self) -> str:
        """Where Home Assistant announces ``online`` (then discovery is sent again)."""
        return f"{self.discovery_prefix}/{HA_STATUS_TOPIC_SUFFIX}"

    @property
    def component(self) -> str:
        """Where the Home Assistant component says it is configured for this satellite."""
        return self.full(COMPONENT)

    def play_id(self, topic: str) -> str | None:
        """The request id of a ``play/<id>`` topic of this satellite, else None."""
        prefix = self.full("play/")
        return topic[len(prefix) :] if topic.startswith(prefix) else None

    def tts_response(self, request_id: str) -> str:
        """Where the WAV answering a ``tts/request`` goes."""
        return self.full(f"{TTS_RESPONSE}/{request_id}")
