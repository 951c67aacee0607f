"""The long-running satellite: audio source -> Pipeline -> MQTT, commands -> frame loop.

``pocket-satellite run --config FILE`` starts it (satellite/cli/run.py). The frame
loop is the only thread that changes the satellite's state: between audio chunks it
drains the one inbox that MQTT fills with validated commands, and the notices of the
speech output (satellite/voice_out.py: one TTS speaker, one player). Home Assistant's
slot lists (``slots``) rebuild the speech grammar in a worker thread; the frame loop swaps
the result in between utterances (see satellite/slot_grammar.py).

Whatever is to be said waits while the pipeline hears someone (after a wake word, until
the utterance and the follow-on window after it are over): speaking then would talk over
the person and deafen the microphone to the rest of what they say. A complete, trusted
command closes its window at once (satellite/understanding/core.py), so its answer is
spoken the moment it is known. So that the person knows at once they were understood, a
request whose answer waits (held, or Home Assistant slow to answer) is acknowledged with
the ``done`` sound (satellite/acknowledge.py): a short tone that leaves the microphone
open.

While nothing goes on, the loop takes the audio up to the wake word model's next decision
(30 ms) at one wake-up instead of 10 ms at a time (``frames_per_wake``, asked by the
source): a third of the wake-ups, each costing far more than its frames' work, and the
wake word is heard in the same frame. A command for the loop ends the wait (NudgingQueue).
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping

from .acknowledge import Acknowledgements
from .actions import (
    Action,
    AnswerDue,
    BargeIn,
    HaIntentRequested,
    ListenAgain,
    PlaybackControl,
    ReplyPaused,
    ReplyRequested,
    ReplyResumed,
    StopSaid,
)
from .app_commands import CommandHandling
from .app_contract import EventSink, FrameProcessor, SpeakJob
from .app_enrol import EnrolHandling, EnrolPlace
from .audio.chunk import AudioChunk
from .audio.io import AudioSink
from .audio.settings import PlayerSettings
from .events import Event, StateChanged
from .mqtt.payloads import (
    Command,
    SayDone,
    Slots,
)
from .mqtt.ratelimit import RateLimitedLog
from .mqtt.tts_responder import Publish, TtsResponder
from .nlu.events import IntentRecognized
from .queues import drain
from .tts.base import TtsEngine
from .understanding.dialogue import Dialogue
from .understanding.slot_grammar import SlotGrammar
from .voice_out import OutputFailed, RequestDone, Speaking, VoiceOut

_LOGGER = logging.getLogger(__name__)

#: Commands waiting for the frame loop beyond this are rejected by the MQTT link.
INBOX_SIZE = 256
#: After the input ends, wait this long for speech and MQTT to finish, s.
DRAIN_SECONDS = 10.0
#: Frames the loop takes at one wake-up while muted (it only drops them).
MUTED_FRAMES_AT_ONCE = 3


class SatelliteApp(EnrolHandling, CommandHandling):
    """Owns the frame loop, the speech output and the TTS responder; talks to the link.

    ``engine`` speaks every reply through the player on ``sink`` (closed by ``close()``),
    converted to ``player.rate_hz``, the rate the sink was opened at.
    """

    def __init__(
        self,
        pipeline: FrameProcessor,
        events: EventSink,
        inbox: queue.Queue[Command],
        engine: TtsEngine,
        sink: AudioSink,
        publish: Publish,
        grammar: SlotGrammar | None = None,
        player: PlayerSettings | None = None,
        sounds: Mapping[str, AudioChunk] | None = None,
        dialogue: Dialogue | None = None,
        on_action: Callable[[Action], None] | None = None,
        enrol_place: EnrolPlace | None = None,
    ) -> None:
        self.pipeline = pipeline
        #: Rebuilds the speech grammar for HA's slot lists (None: they are only kept).
        self.grammar = grammar
        self.events = events
        self.inbox = inbox
        self.state = "idle"
        self.muted = False
        self.slots: Slots | None = None
        self.handled: list[Command] = []
        #: HA responses dropped: for no utterance the dialogue waits for.
        self.responses_dropped = 0
        self._drop_log = RateLimitedLog(_LOGGER)
        self._speaking = False
        #: What is to be said once the pipeline no longer hears anyone.
        self._held: list[SpeakJob] = []
        self._now = 0.0
        self._stopping = threading.Event()
        self._publish = publish
        self.voice = VoiceOut(engine, sink, player)
        #: Feedback sounds by name (tts.feedback); none: no sounds.
        self.sounds = dict(sounds or {})
        done = self.sounds.get("done")
        self._acknowledge = Acknowledgements(
            None if done is None else lambda: self.voice.play_sound(done)
        )
        self.tts = TtsResponder(engine, publish)
        #: Answers utterances and Home Assistant's responses (None: HA's are spoken as
        #: they come, and utterances get no answer).
        self.dialogue = dialogue
        #: Told of every action the app carries out (the timeline).
        self.on_action = on_action
        #: The dialogue asked something: listen without a wake word once it is said.
        self._listen_after_reply = False
        #: What was handed to the voice since it last fell silent, and of it what a
        #: person spoke over (``ReplyPaused``), said again on ``ReplyResumed``.
        self._spoken: list[SpeakJob] = []
        self._paused: list[SpeakJob] = []
        self._init_enrol(enrol_place)  # (enrolments by voice go there; None: not offered)

    # --- the frame loop -----------------------------------------------------------------

    def run(self, source: Iterable[AudioChunk]) -> None:
        """Process audio until the source ends or stop() is called."""
        self._set_state("muted" if self.muted else "idle", force=True)
        for chunk in self._heard(source):  # (an enrolment keeps the microphone's audio)
            self._now = chunk.end_seconds
            self.poll()
            if self._stopping.is_set():
                break
            if self.muted:
                continue
            self._take([*self.pipeline.process(chunk), *self.pipeline.poll(self._now)])
            self._speak_held()
        if not self._stopping.is_set():  # the input ran out: a command still spoken counts
            self._take(self.pipeline.end_of_input())
        self._speak_held()

    def poll(self) -> None:
        """Handle queued commands and speech notices, answers overdue from HA (loop thread)."""
        self._take_voice_notices()
        self._enrol_poll()
        if self.dialogue is not None:
            for item in self.dialogue.tick(self._now, self.pipeline.hearing):
                self._perform(item)
            self._acknowledge.tick(self._now, self.dialogue.waiting_for)
        self._speak_held()
        for command in drain(self.inbox):
            self.handle(command)
        if self.grammar is not None:
            self.grammar.poll()  # a rebuilt grammar goes in between utterances

    def frames_per_wake(self) -> int:
        """How many 10 ms frames the loop may take at one wake-up (a paced source asks
        before each): 1 while anything goes on, so nothing is heard, said or answered
        later than frame by frame; while idle, the pipeline's frames up to the wake word
        model's next decision (commands wake the loop at once: see NudgingQueue)."""
        if self.muted:
            return MUTED_FRAMES_AT_ONCE
        if (
            self._speaking
            or self._held
            or self._listen_after_reply
            or (self.dialogue is not None and self.dialogue.waiting_for)
            or not self.voice.idle()
        ):
            return 1
        return self.pipeline.idle_frames()

    def stop(self) -> None:
        """Ask the frame loop to stop after the current chunk."""
        self._stopping.set()

    def close(self, timeout: float = DRAIN_SECONDS) -> None:
        """Let pending understanding, queued speech and TTS answers finish, then end. A
        call for help still asked about ("Do you need help?") goes out, unconfirmed."""
        self._take(self.pipeline.poll(self._now, wait_seconds=timeout))
        if self.dialogue is not None:  # a call for help asked about goes out, unconfirmed
            for item in self.dialogue.close(self._now):
                self._perform(item)
        self._enrol_close(timeout)
        self._speak_held(at_last=True)
        deadline = time.monotonic() + timeout
        while not self.voice.idle() and time.monotonic() < deadline:
            time.sleep(0.02)
            self.poll()
        self.voice.close()
        self.tts.close()
        self.poll()
        if self.grammar is not None:
            self.grammar.close()

    def _take(self, events: list[Event]) -> None:
        """The pipeline's events, then the actions they brought. The intent of an
        utterance the dialogue asks about once more (a doubtful one) goes out as not
        understood: Home Assistant acts on intent events. The dialogue publishes it
        when the request is heard again."""
        events, actions = self._enrol_filter(events, self.pipeline.take_actions())
        asks = self.dialogue is not None  # (a doubtful request's intent waits to be heard again)
        doubtful = {a.utterance_id for a in actions if isinstance(a, AnswerDue) and a.doubtful}
        for event in events:
            if isinstance(event, IntentRecognized) and asks and event.utterance_id in doubtful:
                self._on_event(dataclasses.replace(event, intent=None, slots={}))
            else:
                self._on_event(event)
        for action in actions:
            self._perform(action)

    def _perform(self, item: Event | Action) -> None:
        """Publish a fact; carry out an action."""
        if isinstance(item, Event):
            self._on_event(item)
            return
        if self.on_action is not None:
            self.on_action(item)
        if isinstance(item, AnswerDue):
            if self.dialogue is not None:
                at = item.timestamp_seconds
                answers = self.dialogue.handle(item.result, item.utterance_id, at, item.doubtful)
                for answer in answers:
                    self._perform(answer)
        elif isinstance(item, ListenAgain):
            self._listen_after_reply = True
        elif isinstance(item, BargeIn):
            self.voice.stop()
        elif isinstance(item, StopSaid):  # as the stop control
            self._stop_speaking()
        elif isinstance(item, ReplyPaused):  # stopped: the echo ends, the person is heard
            self._paused = [dataclasses.replace(job, request_id=None) for job in self._spoken]
            self.voice.stop()
        elif isinstance(item, ReplyResumed):  # from its start (its say/done went out)
            resumed, self._paused = self._paused, []
            for job in resumed:
                self._say(job)
        elif isinstance(item, ReplyRequested):
            self._acknowledge.answered(item.utterance_id)
            if self.pipeline.hearing:
                self._acknowledge.now(item.utterance_id)
            self._say(SpeakJob(item.text))
        elif isinstance(item, HaIntentRequested):
            if self.pipeline.hearing:  # its answer will wait for the person anyway
                self._acknowledge.now(item.utterance_id)
            else:
                self._acknowledge.later(item.utterance_id, item.timestamp_seconds)
        elif isinstance(item, PlaybackControl):
            if item.action == "stop":
                self._stop_speaking()
            elif item.action == "volume":
                self.voice.volume = item.volume / 100.0

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StateChanged):
            if not self._speaking:
                self._set_state(event.state, event.timestamp_seconds)
            return
        self.events.publish_event(event)

    def _say(self, job: SpeakJob) -> None:
        """Say it now, or once nobody is speaking to the satellite."""
        if self.pipeline.hearing or self._held:
            self._held.append(job)
        else:
            self._speak(job)

    def _speak(self, job: SpeakJob) -> None:
        chime = self.sounds.get("awake") if job.preannounce else None
        self._spoken.append(job)
        self.voice.deliver(job.text, job.request_id, job.audio, chime)

    def _speak_held(self, at_last: bool = False) -> None:
        """Pass on what waited, in order, when the pipeline no longer hears anyone (and
        ``at_last``, when the satellite is closing)."""
        if self._held and (at_last or not self.pipeline.hearing):
            held, self._held = self._held, []
            for job in held:
                self._speak(job)

    def _stop_speaking(self) -> None:
        """Stop: what is playing, what is queued and what waited (requests among them
        are answered ``stopped``)."""
        self._speak_held(at_last=True)
        self.voice.stop()

    def _take_voice_notices(self) -> None:
        """Speaking or not, requests answered, an output that failed."""
        for notice in self.voice.poll():
            if isinstance(notice, RequestDone):
                payload = SayDone(notice.request_id, notice.status, notice.error)
                self._publish("say/done", payload.to_json(), 1)
            elif isinstance(notice, OutputFailed):
                _LOGGER.warning("Reply %s not heard: %s", notice.reply_id, notice.error)
                self.events.publish_event(notice.stage_error(self._now))
            elif isinstance(notice, Speaking):
                self._speaking = notice.speaking
                self.pipeline.set_speaking(notice.speaking)
                if not notice.speaking:
                    self._spoken = []
                if not self.muted:
                    self._set_state("responding" if notice.speaking else "idle")
                if not notice.speaking and self._listen_after_reply:
                    self._listen_after_reply = False
                    self._take(self.pipeline.listen_again(self._now))

    def _set_state(self, state: str, when: float | None = None, force: bool = False) -> None:
        if state == self.state and not force:
            return
        previous, self.state = self.state, state
        stamp = round(self._now if when is None else when, 3)
        self.events.publish_event(StateChanged(stamp, state=state, previous=previous))
