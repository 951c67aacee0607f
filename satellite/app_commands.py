"""The commands Home Assistant sends, as the app carries them out (frame loop thread):
say, play, HA's responses, TTS requests, slot lists, controls and enrolments (the last
run by satellite/app_enrol.py)."""

from __future__ import annotations

import logging

from .actions import Action
from .app_contract import FrameProcessor, SpeakJob
from .events import Event
from .mqtt.payloads import (
    Command,
    Control,
    EnrolRequest,
    PlayRequest,
    SayRequest,
    Slots,
    SpokenResponse,
    TtsRequest,
)
from .mqtt.ratelimit import RateLimitedLog
from .mqtt.tts_responder import TtsResponder
from .understanding.dialogue import Dialogue
from .understanding.slot_grammar import SlotGrammar
from .voice_out import VoiceOut

_LOGGER = logging.getLogger(__name__)


class CommandHandling:
    """SatelliteApp's side that acts on validated commands (see satellite/app.py)."""

    pipeline: FrameProcessor
    grammar: SlotGrammar | None
    dialogue: Dialogue | None
    voice: VoiceOut
    tts: TtsResponder
    handled: list[Command]
    slots: Slots | None
    muted: bool
    responses_dropped: int
    _drop_log: RateLimitedLog
    _speaking: bool
    _now: float

    def _say(self, job: SpeakJob) -> None:
        raise NotImplementedError

    def _perform(self, item: Event | Action) -> None:
        raise NotImplementedError

    def _set_state(self, state: str, when: float | None = None, force: bool = False) -> None:
        raise NotImplementedError

    def _stop_speaking(self) -> None:
        raise NotImplementedError

    def _enrol(self, command: EnrolRequest) -> None:
        raise NotImplementedError

    def _enrol_muted(self) -> None:
        raise NotImplementedError

    def handle(self, command: Command) -> None:
        """Act on one validated command."""
        self.handled.append(command)
        if isinstance(command, SayRequest):
            self._say(SpeakJob(command.text, command.id, command.preannounce))
        elif isinstance(command, SpokenResponse):
            self._respond(command)
        elif isinstance(command, PlayRequest):
            self._say(SpeakJob("", command.id, audio=command.audio))
        elif isinstance(command, TtsRequest):
            self.tts.request(command)
        elif isinstance(command, Slots):
            self.slots = command
            _LOGGER.info("HA exposes %d names in %d areas", len(command.names), len(command.areas))
            if self.grammar is not None:
                self.grammar.update(command.names, command.areas)
        elif isinstance(command, Control):
            self._control(command)
        elif isinstance(command, EnrolRequest):
            self._enrol(command)

    def _respond(self, command: SpokenResponse) -> None:
        """HA's answer is spoken only for an utterance the dialogue still waits for; one
        for an unknown or expired utterance (before a restart, too late, made up, or no
        dialogue at all) is dropped and counted, never spoken."""
        if self.dialogue is None or command.utterance_id not in self.dialogue.waiting_for:
            self.responses_dropped += 1
            self._drop_log.log(
                logging.INFO,
                "response",
                "Dropped Home Assistant's response for %.80s: no answer to that utterance is "
                "awaited (unknown or expired)",
                command.utterance_id,
            )
            return
        for item in self.dialogue.on_response(command.utterance_id, command.text, self._now):
            self._perform(item)

    def _control(self, command: Control) -> None:
        if command.command == "mute":
            self.muted = True
            self.pipeline.reset()
            self._enrol_muted()
            self._set_state("muted")
        elif command.command == "unmute":
            self.muted = False
            self._set_state("responding" if self._speaking else "idle")
        elif command.command == "stop":
            self._stop_speaking()
        elif command.command == "volume" and command.volume is not None:
            self.voice.volume = command.volume
        elif command.command == "wake_words" and command.wake_words is not None:
            try:
                self.pipeline.set_wake_words(command.wake_words)
            except ValueError as err:
                _LOGGER.warning("Ignoring Home Assistant's wake word choice: %s", err)
            else:
                _LOGGER.info("Listening for %s", ", ".join(command.wake_words))
