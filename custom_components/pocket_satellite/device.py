"""One satellite over MQTT: subscriptions, the latest state, requests and listeners."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final

from homeassistant.components import mqtt
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import device_registry as dr

from .alerts import FiredAlerts
from .const import ALERT_HELP, DOMAIN, EVENT_ALERT_CLEARED, SEEN_IDS
from .controls import SatelliteControls
from .messages import (
    AlertClearedMessage,
    AlertMessage,
    EnrolmentMessage,
    HelpMessage,
    IntentMessage,
    MessageError,
    MetricsMessage,
    ProsodyMessage,
    SatelliteInfo,
    SayDoneMessage,
    load_json,
)
from .topics import TOPICS, TopicRow

_LOGGER = logging.getLogger(__name__)

#: Listener kinds entities can follow ("settings": what HA set through controls.py).
KINDS: Final = (
    "status",
    "help_cleared",
    "settings",
    *(row.kind for row in TOPICS if row.kind is not None),
)


class PocketSatellite:
    """The Home Assistant side of one satellite's MQTT topics."""

    def __init__(
        self, hass: HomeAssistant, satellite_id: str, base_topic: str, info: SatelliteInfo
    ) -> None:
        self.hass = hass
        self.satellite_id = satellite_id
        self.base = f"{base_topic}/{satellite_id}"
        self.info = info
        self.online = False
        """The satellite's own ``status`` (its last will says ``offline``)."""
        self.broker_connected = True
        """Home Assistant's MQTT client is connected to the broker."""
        self._was_available: bool | None = None
        self.state = "idle"
        self.last_intent: IntentMessage | None = None
        self.last_alert: AlertMessage | None = None
        self.last_alert_cleared: AlertClearedMessage | None = None
        self.last_help: HelpMessage | None = None
        self.last_prosody: ProsodyMessage | None = None
        self.last_enrolment: EnrolmentMessage | None = None
        #: The satellite's latest counters and gauges (``metrics``), for diagnostics.
        self.metrics: MetricsMessage | None = None
        self.rejected: dict[str, int] = {}
        self.intent_handler: Callable[[IntentMessage], Coroutine[Any, Any, None]] | None = None
        self._listeners: dict[str, list[Callable[[], None]]] = {k: [] for k in KINDS}
        self._unsubscribe: list[CALLBACK_TYPE] = []
        self._seen: deque[str] = deque(maxlen=SEEN_IDS)
        self._say: dict[str, asyncio.Future[SayDoneMessage]] = {}
        self._tts: dict[str, asyncio.Future[bytes]] = {}
        self.fired_alerts = FiredAlerts(hass, satellite_id)
        self.controls = SatelliteControls(self)

    @property
    def available(self) -> bool:
        """Online, as far as Home Assistant can know: its status and the broker link."""
        return self.online and self.broker_connected

    def topic(self, path: str) -> str:
        """Full topic name of ``path`` under this satellite."""
        return f"{self.base}/{path}"

    # --- lifecycle --------------------------------------------------------------------

    async def async_start(self) -> None:
        """Subscribe to everything the satellite publishes."""
        await self.fired_alerts.async_load()  # before the retained alert/active arrives
        handlers: list[tuple[str, Callable[[mqtt.ReceiveMessage], None], str | None]] = [
            ("status", self._on_status, "utf-8"),
            *((row.path, self._receiver(row), "utf-8") for row in TOPICS),
            ("tts/response/+", self._on_tts_response, None),
        ]
        for path, handler, encoding in handlers:
            self._unsubscribe.append(
                await mqtt.async_subscribe(
                    self.hass, self.topic(path), handler, qos=1, encoding=encoding
                )
            )
        self._unsubscribe.append(
            mqtt.async_subscribe_connection_status(self.hass, self._on_broker_connection)
        )
        self._unsubscribe.append(self.controls.async_start())

    @callback
    def async_stop(self) -> None:
        """Unsubscribe and fail pending requests."""
        while self._unsubscribe:
            self._unsubscribe.pop()()
        for say in self._say.values():
            say.cancel()
        for tts in self._tts.values():
            tts.cancel()

    @callback
    def add_listener(self, kind: str, listener: Callable[[], None]) -> CALLBACK_TYPE:
        """Call ``listener`` when something of ``kind`` arrives; returns a remover."""
        self._listeners[kind].append(listener)
        return lambda: self._listeners[kind].remove(listener)

    @property
    def event_data(self) -> dict[str, Any]:
        """What every bus event about this satellite carries: its ids."""
        device = dr.async_get(self.hass).async_get_device(identifiers={(DOMAIN, self.satellite_id)})
        return {"device_id": device and device.id, "satellite_id": self.satellite_id}

    @callback
    def clear_help(self) -> None:
        """Someone took care of the help request: say so to the help sensor and fire
        EVENT_ALERT_CLEARED (``kind`` help)."""
        help_id = None if self.last_help is None else self.last_help.id
        self.hass.bus.async_fire(
            EVENT_ALERT_CLEARED, {**self.event_data, "kind": ALERT_HELP, "id": help_id}
        )
        self._notify("help_cleared")

    @callback
    def notify(self, kind: str) -> None:
        """Tell ``kind``'s listeners (for what is kept outside this class: controls.py)."""
        self._notify(kind)

    def _notify(self, kind: str) -> None:
        for listener in list(self._listeners[kind]):
            listener()

    def diagnostics(self) -> dict[str, Any]:
        """A snapshot for diagnostics."""
        return {
            "base_topic": self.base,
            "available": self.available,
            "online": self.online,
            "broker_connected": self.broker_connected,
            "state": self.state,
            "info": self.info.as_dict(),
            "last_intent": None if self.last_intent is None else vars(self.last_intent),
            "last_alert": None if self.last_alert is None else vars(self.last_alert),
            "last_prosody": None if self.last_prosody is None else vars(self.last_prosody),
            "metrics": None if self.metrics is None else vars(self.metrics),
            "rejected": dict(self.rejected),
            "pending_requests": len(self._say) + len(self._tts),
        }

    # --- requests -----------------------------------------------------------------------

    async def async_say(
        self, text: str, timeout: float, preannounce: bool = False
    ) -> SayDoneMessage | None:
        """Publish ``say`` (with the satellite's chime first when ``preannounce``); the
        ``say/done`` answer, or None when it did not come in time."""
        request_id = f"ha_{secrets.token_hex(6)}"
        request: dict[str, Any] = {"text": text, "id": request_id}
        if preannounce:
            request["preannounce"] = True
        return await self._until_done(request_id, lambda: self._publish("say", request), timeout)

    async def async_play(self, wav: bytes, timeout: float) -> SayDoneMessage | None:
        """Publish a WAV on ``play/<id>``; the ``say/done`` answer, or None when it did
        not come in time."""
        request_id = f"ha_{secrets.token_hex(6)}"
        topic = self.topic(f"play/{request_id}")
        return await self._until_done(
            request_id, lambda: mqtt.async_publish(self.hass, topic, wav, qos=1), timeout
        )

    async def _until_done(
        self, request_id: str, send: Callable[[], Awaitable[None]], timeout: float
    ) -> SayDoneMessage | None:
        """Send a request answered on ``say/done``; its answer, or None after ``timeout``."""
        future: asyncio.Future[SayDoneMessage] = self.hass.loop.create_future()
        self._say[request_id] = future
        try:
            await send()
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            return None
        finally:
            self._say.pop(request_id, None)

    async def async_tts(self, text: str, voice: str | None, timeout: float) -> bytes:
        """Ask the satellite for a WAV of ``text``; HomeAssistantError when it fails."""
        request_id = f"ha_{secrets.token_hex(6)}"
        future: asyncio.Future[bytes] = self.hass.loop.create_future()
        self._tts[request_id] = future
        request: dict[str, Any] = {"id": request_id, "text": text}
        if voice:
            request["voice"] = voice
        try:
            await self._publish("tts/request", request)
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="tts_timeout",
                translation_placeholders={
                    "satellite": self.satellite_id,
                    "seconds": f"{timeout:g}",
                },
            ) from None
        finally:
            self._tts.pop(request_id, None)

    @callback
    def finish_say(self, done: SayDoneMessage) -> None:
        """Complete the async_say waiting for ``done`` (nothing when none waits)."""
        future = self._say.get(done.id)
        if future is not None and not future.done():
            future.set_result(done)

    async def async_respond(self, utterance_id: str, text: str) -> None:
        """Publish HA's spoken answer to an intent on ``response``."""
        await self._publish("response", {"utterance_id": utterance_id, "text": text})

    async def async_control(self, command: str) -> None:
        """Publish a ``control`` command without a value (``stop``, ``mute``, ``unmute``)."""
        await self._publish("control", {"command": command})

    async def async_enrol(self, speaker: str | None, prompts: int | None) -> None:
        """Start learning ``speaker``'s voice by voice (None: cancel the enrolment)."""
        request: dict[str, Any] = {"action": "cancel" if speaker is None else "start"}
        if speaker is not None:
            request["speaker"] = speaker
            if prompts is not None:
                request["prompts"] = prompts
        await self._publish("enrol", request)

    async def async_publish_slots(self, names: list[str], areas: list[str]) -> None:
        """Publish the exposed names and areas, retained, on ``slots``."""
        await self._publish("slots", {"names": names, "areas": areas}, retain=True)

    async def _publish(self, path: str, data: dict[str, Any], retain: bool = False) -> None:
        payload = json.dumps(data, ensure_ascii=False)
        await mqtt.async_publish(self.hass, self.topic(path), payload, qos=1, retain=retain)

    # --- incoming -------------------------------------------------------------------------

    def _reject(self, msg: mqtt.ReceiveMessage, err: MessageError) -> None:
        count = self.rejected.get(msg.topic, 0) + 1
        self.rejected[msg.topic] = count
        log = _LOGGER.warning if count == 1 else _LOGGER.debug
        log("Ignoring a bad payload on %s (%d so far): %s", msg.topic, count, err)

    def _fresh(self, message_id: str) -> bool:
        """False for a redelivered QoS 1 message (same id seen recently)."""
        if message_id in self._seen:
            return False
        self._seen.append(message_id)
        return True

    def _receiver(self, row: TopicRow[Any]) -> Callable[[mqtt.ReceiveMessage], None]:
        """The subscription callback of ``row``'s topic; TopicRow says what it does.

        A closure, not a partial: MQTT names a partial's first argument when it logs an
        exception, and a row has no name.
        """

        @callback
        def receive(msg: mqtt.ReceiveMessage) -> None:
            try:
                value = row.parse(load_json(msg.payload))
            except MessageError as err:
                self._reject(msg, err)
                return
            self.handle(row, value)

        return receive

    @callback
    def handle(self, row: TopicRow[Any], value: Any) -> None:
        """Handle a parsed message as TopicRow says (also an alert from alert/active)."""
        if row.opens_alert and value.id in self.fired_alerts:
            self._ack_soon(value.id, save=False)  # fired before: acknowledge it again
            return
        if row.dedupe and not self._fresh(value.id):
            return
        if row.keep is not None:
            setattr(self, row.keep, value)
        if row.fire is not None:
            row.fire(self, value)
        if row.kind is not None:
            self._notify(row.kind)
        if row.hand_off is not None:
            row.hand_off(self, value)
        if row.opens_alert:
            self.fired_alerts.add(value.id)
            self._ack_soon(value.id, save=True)

    def _ack_soon(self, alert_id: str, save: bool) -> None:
        self.hass.async_create_task(self._async_ack(alert_id, save), eager_start=False)

    async def _async_ack(self, alert_id: str, save: bool) -> None:
        """Remember the fired id, then tell the satellite (which closes the alert)."""
        if save:
            await self.fired_alerts.async_save()
        try:
            await self._publish("alert/ack", {"id": alert_id})
        except HomeAssistantError as err:  # alert/active comes again: acknowledged then
            _LOGGER.warning("Could not acknowledge alert %s yet: %s", alert_id, err)

    @callback
    def _on_status(self, msg: mqtt.ReceiveMessage) -> None:
        self.online = msg.payload == "online"
        self._availability_changed()

    @callback
    def _on_broker_connection(self, connected: bool) -> None:
        self.broker_connected = connected
        self._availability_changed()

    def _availability_changed(self) -> None:
        """Tell the entities; log once when the satellite goes away and once when back."""
        available = self.available
        if available != self._was_available:
            if available:
                if self._was_available is not None:
                    _LOGGER.info("Pocket Satellite %s is back online", self.satellite_id)
            else:
                _LOGGER.info(
                    "Pocket Satellite %s is unavailable: %s",
                    self.satellite_id,
                    "its status is offline"
                    if self.broker_connected
                    else "Home Assistant lost the MQTT broker",
                )
            self._was_available = available
        self._notify("status")

    @callback
    def _on_tts_response(self, msg: mqtt.ReceiveMessage) -> None:
        request_id = msg.topic.rsplit("/", 1)[-1]
        future = self._tts.get(request_id)
        if future is None or future.done():
            return
        payload = msg.payload
        if isinstance(payload, str):
            payload = payload.encode()
        if payload[:4] == b"RIFF":
            future.set_result(bytes(payload))
            return
        try:
            error = load_json(payload).get("error", "unknown error")
        except MessageError as err:
            error = str(err)
        future.set_exception(
            HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="tts_failed",
                translation_placeholders={"satellite": self.satellite_id, "error": str(error)},
            )
        )
