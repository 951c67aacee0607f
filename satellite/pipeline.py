"""The frame loop: plain synchronous code, one 10 ms frame at a time.

``Pipeline.process(chunk)`` takes audio of any size and format, cuts it into 10 ms
frames and returns the events they produced. A stage that raises is logged, reported as
a ``StageError`` event, reset, and replaced for that frame by a neutral result, so
listening goes on.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from .actions import Action
from .audio.chunk import AudioChunk
from .audio.framer import Framer
from .config import Config
from .events import Event, StateChanged, UtteranceEnded, WakeDetected
from .frontend.base import WakeHit
from .frontend.recorder import Phase, of_room
from .pipeline_steps import (
    frames_at_once,
    hears_someone,
    reset_stages,
    understand_more,
    with_prosody,
)
from .stages import Stages, build_stages
from .stt.hearing import MicHistory
from .supervisor import Supervisor
from .understanding import Understanding
from .while_speaking import WhileSpeaking

_LOGGER = logging.getLogger(__name__)
#: Why an utterance still being spoken when the input ran out ended (``end_of_input``).
END_OF_INPUT_REASON = "end_of_input"


class State(StrEnum):
    """What the satellite is doing."""

    IDLE = "idle"
    LISTENING = "listening"


def wake_event(hit: WakeHit) -> WakeDetected:
    """The event a wake word heard gives."""
    return WakeDetected(
        timestamp_seconds=round(hit.timestamp_seconds, 3),
        wake_word=hit.wake_word,
        model=hit.model,
        probability=round(hit.probability, 4),
    )


def build_pipeline(
    config: Config, continuous: bool = False, understanding: Understanding | None = None
) -> Pipeline:
    """The frame loop's pipeline from the configuration: every stage, and
    ``understanding`` when given (``continuous``: no wake word, every utterance heard)."""
    return Pipeline(build_stages(config, continuous, understanding))


class Pipeline:
    """Front end + wake word + utterance recorder as one synchronous frame loop. With
    ``wake`` None it runs continuously: every utterance the VAD finds, no wake word."""

    def __init__(self, stages: Stages) -> None:
        self.stages = stages
        self._framer = Framer()
        self._state = State.LISTENING if stages.wake is None else State.IDLE
        self._mic = MicHistory()
        self._last_frame: AudioChunk | None = None
        self._supervisor = Supervisor()
        self._voice = WhileSpeaking(stages, self._supervisor)
        self._actions: list[Action] = []

    def set_wake_words(self, models: tuple[str, ...]) -> None:
        """Listen only for these wake word models (ValueError: not loaded, or no wake word)."""
        if self.stages.wake is None:
            raise ValueError("this satellite listens without a wake word (continuous)")
        self.stages.wake.set_active(models)

    @property
    def errors_by_stage(self) -> dict[str, int]:
        """How often each stage has failed."""
        return self._supervisor.errors_by_stage

    @property
    def state(self) -> State:
        """Current state."""
        return self._state

    @property
    def hearing(self) -> bool:
        """True while someone may be speaking to the satellite (``hears_someone``): replies
        wait for it to pass rather than talk over the person and deafen the microphone."""
        return hears_someone(self.stages.recorder, self._voice.listens)

    @property
    def speaking(self) -> bool:
        """True while the satellite's own voice is playing (see ``set_speaking``)."""
        return self._voice.speaking

    def set_speaking(self, speaking: bool) -> None:
        """Whether the satellite is speaking (loop thread; see satellite/while_speaking.py)."""
        self._voice.set_speaking(speaking)

    def idle_frames(self) -> int:
        """Frames the loop may take at one wake-up (see ``frames_at_once``)."""
        return frames_at_once(self.stages, self._state is State.IDLE and not self._voice.speaking)

    def listen_again(self, at_seconds: float) -> list[Event]:
        """Listen for an utterance with no wake word from ``at_seconds`` (the satellite
        asked a question and has said it); it times out as after a wake word, also
        listening on without one (an enrolment's prompt nobody answers goes on). Nothing
        happens while an utterance is being heard."""
        s, events = self.stages, list[Event]()
        if s.wake is None and s.recorder.phase is Phase.AWAITING_ONSET:
            s.recorder.listen_for_answer(at_seconds)
        if s.wake is None or s.recorder.active:
            return events
        self._set_state(State.LISTENING, at_seconds, events)
        s.vad.reset()
        s.recorder.listen_for_answer(at_seconds)
        return events

    def process(self, chunk: AudioChunk) -> list[Event]:
        """Feed audio of any length; return the events it completed, in order."""
        events: list[Event] = []
        for frame in self._framer.push(chunk):
            self._process_frame(frame, events)
            self._understand(frame, events)
        return events

    def end_of_input(self) -> list[Event]:
        """The input ran out (a file ended): an utterance still being spoken ends at the
        last frame, with reason ``end_of_input``, and is understood like any other
        instead of being lost; a follow-on window still open closes. Call it after the
        last ``process``."""
        events: list[Event] = []
        recorder, last = self.stages.recorder, self._last_frame
        if last is None:
            return events
        self._understand(last, events, at_once=True)  # a pause may have ended it already
        if recorder.phase is Phase.IN_SPEECH:
            no_events: list[Event] = []
            ended = self._supervisor.guard(
                recorder,
                lambda f: recorder.end_now(f.end_seconds, END_OF_INPUT_REASON),
                last,
                no_events,
                events,
            )
            self._settle(last, ended, events)
        self._understand(last, events, at_once=True)
        if recorder.following_on:  # nobody can go on speaking now
            recorder.reset()
            self._set_state(State.IDLE, last.end_seconds, events)
        return events

    def poll(self, now_seconds: float, wait_seconds: float = 0.0) -> list[Event]:
        """Events that arrive between frames: LLM fallback results (waiting up to
        ``wait_seconds`` for results still being worked out)."""
        understanding = self.stages.understanding
        return [] if understanding is None else understanding.poll(now_seconds, wait_seconds)

    def take_actions(self) -> list[Action]:
        """What the satellite is to do since the last call, in order: barge-in, and the
        answers understanding owes (the app carries them out; nothing is published)."""
        actions, self._actions = self._actions, []
        understanding = self.stages.understanding
        if understanding is not None:
            actions += understanding.take_actions()
        settled = understanding is None or understanding.settled
        at = 0.0 if self._last_frame is None else self._last_frame.end_seconds
        return self._voice.settle(actions, self.stages.recorder.active, settled, at)

    def reset(self) -> None:
        """Reset every stage and return to the starting state."""
        reset_stages(self.stages)
        self._framer.reset()
        self._last_frame = None
        self._state = State.LISTENING if self.stages.wake is None else State.IDLE
        self._voice.reset()

    def end_follow_on(self) -> None:
        """No follow-on after the utterance just ended (an enrolment's take): go idle."""
        recorder = self.stages.recorder
        recorder.close_follow_on()
        if self.stages.wake is not None and not recorder.active:
            self._state = State.IDLE  # (listening again says so)

    # --- the loop ---------------------------------------------------------------------

    def _understand(self, frame: AudioChunk, events: list[Event], at_once: bool = False) -> None:
        """Understanding's waiting work: a frame's share, or ``at_once`` all of it."""
        understanding = self.stages.understanding
        if understanding is not None and (at_once or understanding.busy):
            more = understand_more(self._supervisor, self.stages, frame, events, at_once)
            self._emit(frame, more, events)

    def _process_frame(self, frame: AudioChunk, events: list[Event]) -> None:
        s = self.stages
        self._last_frame = frame
        frame = self._voice.cancel_echo(frame, events, self._actions)
        s.recorder.levels.observe(frame, of_room=of_room(s.recorder, self._voice.speaking))
        clean = self._supervisor.guard(s.noise, s.noise.process, frame, frame, events)
        if s.understanding is not None:
            voice = self._voice  # the recognizer's (MicHistory):
            self._mic.add(frame, clean, voice.own_voice, voice.speaking)
        # The wake word model normalises its own features (PCAN); it hears better before
        # our gain stage than after it. What it hears is measured on many voices and
        # rooms (bench/robustness.py): by default its own gentle WebRTC suppression.
        hit: WakeHit | None = None
        if s.wake is not None:
            ears = s.wake_ears
            heard = (
                clean
                if ears is None
                else self._supervisor.guard(ears, ears.process, frame, frame, events)
            )
            hit = self._supervisor.guard(s.wake, s.wake.process, heard, None, events)
        clean = self._supervisor.guard(s.gain, s.gain.process, clean, clean, events)

        if hit is not None and s.recorder.following_on:
            self._start_over(hit, clean, events)
            return
        hears = self._voice.over_reply  # while speaking: someone over the reply
        if hit is None and hears(clean, events, self._actions, self._record, self._listen_from):
            return
        if not s.recorder.active:
            s.recorder.remember(clean)
            if hit is not None:
                self._voice.barge_in(hit, self._actions)
                self._on_wake(hit, events)
            return
        if self._voice.speaking:
            return  # the satellite's own voice: not for the VAD or the recorder
        probability = self._supervisor.guard(s.vad, s.vad.process, clean, 0.0, events)
        self._record(clean, probability, events)

    def _start_over(self, hit: WakeHit, frame: AudioChunk, events: list[Event]) -> None:
        """A wake word while listening on after an utterance: what the recorder took for
        a follow-on was the wake word, so drop it and listen for the command after it."""
        self.stages.recorder.reset()
        self.stages.recorder.remember(frame)
        if (understanding := self.stages.understanding) is not None:
            drop = understanding.reset
            self._supervisor.guard(understanding, lambda _: drop(), frame, None, events)
        self._on_wake(hit, events)

    def _on_wake(self, hit: WakeHit, events: list[Event]) -> None:
        events.append(wake_event(hit))
        self._listen_from(hit.timestamp_seconds, events)

    def _listen_from(self, at_seconds: float, events: list[Event]) -> None:
        """Look for an utterance from ``at_seconds`` (a wake word's, or someone's who
        spoke over the reply), the VAD run again over the audio kept before it."""
        s = self.stages
        self._set_state(State.LISTENING, at_seconds, events)
        s.vad.reset()
        warm_up, search = s.recorder.start_after_wake(at_seconds)
        for past in warm_up:
            self._supervisor.guard(s.vad, s.vad.process, past, 0.0, events)
        for past in search:
            probability = self._supervisor.guard(s.vad, s.vad.process, past, 0.0, events)
            self._record(past, probability, events)

    def _record(self, frame: AudioChunk, probability: float, events: list[Event]) -> None:
        recorder = self.stages.recorder
        no_events: list[Event] = []
        new = self._supervisor.guard(
            recorder, lambda f: recorder.update(f, probability), frame, no_events, events
        )
        self._settle(frame, new, events)

    def _settle(self, frame: AudioChunk, new: list[Event], events: list[Event]) -> None:
        """Pass what the recorder just produced through understanding (or prosody alone)
        and go back to idle when the utterance is over."""
        recorder = self.stages.recorder
        no_events: list[Event] = []
        understanding = self.stages.understanding
        if understanding is not None:
            new = new + self._supervisor.guard(
                understanding,
                lambda f: understanding.observe(f, new, recorder, self._mic),
                frame,
                no_events,
                events,
            )
        new = with_prosody(self._supervisor, self.stages, frame, new, events)
        self._emit(frame, new, events)

    def _emit(self, frame: AudioChunk, new: list[Event], events: list[Event]) -> None:
        """Hand on ``new`` (of the recorder, understanding); idle when the utterance is over."""
        events.extend(new)
        recorder = self.stages.recorder
        if self.stages.wake is not None and not recorder.active and self._state is State.LISTENING:
            when = new[-1].timestamp_seconds if new else frame.end_seconds
            self._set_state(State.IDLE, when, events)
        elif any(isinstance(e, UtteranceEnded) for e in new):
            _LOGGER.debug("Utterance ended at %.2f s", frame.end_seconds)

    def _set_state(self, state: State, when: float, events: list[Event]) -> None:
        if state is not self._state:
            events.append(
                StateChanged(
                    timestamp_seconds=round(when, 3), state=state.value, previous=self._state.value
                )
            )
            self._state = state
