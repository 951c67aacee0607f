"""The frame loop while the satellite speaks: its own voice out, and who speaks over it.

While a reply plays the microphone hears the satellite's own voice. ``WhileSpeaking``
holds whether it speaks (the app tells the loop: ``Pipeline.set_speaking``), takes the
speaker's echo out of each frame (``frontend.echo``, first in the loop: the canceller
needs the microphone as it was heard), and turns what is heard over a reply into
actions: a stop word (``StopSaid``, ``frontend.echo.hear_while_speaking``), the wake
word (``BargeIn``), and other speech over the reply (``ReplyPaused``; also with
``hear_while_speaking``): the reply is paused and what was said heard as an utterance.

What becomes of a paused reply is decided when that utterance has been understood and
nobody speaks on: anything understood (a new command, a follow-on of the sentence before
the reply, a stop) answers instead and the reply is dropped; nothing heard or nothing
understood (someone talking to somebody else, a cough the gate let through) gives
``ReplyResumed`` and no "Sorry, I didn't understand": the person still gets the answer
they asked for, and the satellite does not apologise for speech not meant for it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from .actions import Action, AnswerDue, BargeIn, ReplyPaused, ReplyResumed, StopSaid
from .audio.chunk import AudioChunk
from .events import Event
from .frontend.base import WakeHit
from .pipeline_steps import waiting_to_follow_on
from .stages import Stages
from .stt.keywords import StopHeard
from .supervisor import Supervisor

_LOGGER = logging.getLogger(__name__)
#: A stop word heard over the reply began about this long before it was heard, s (where
#: the VAD hears no speech under way: else where that began, up to 0.5 s earlier).
STOP_WORD_SECONDS = 0.3
#: Intents acted on at once when heard over a reply: they stop it, as the person wants.
STOPPING = frozenset({"Stop", "HassNevermind"})


class WhileSpeaking:
    """Whether the satellite speaks, and what the loop does about it frame by frame."""

    def __init__(self, stages: Stages, supervisor: Supervisor) -> None:
        self.stages = stages
        self.supervisor = supervisor
        #: True while the satellite's own voice is playing.
        self.speaking = False
        #: Speech over the reply (None: only the wake word and stop words are heard).
        self.talk_over = stages.talk_over
        #: When the reply was paused for someone speaking over it, until it is settled.
        self.paused_at: float | None = None
        self._resume = False
        #: Where a stop word heard in this frame began (about), s.
        self._stop_onset: float | None = None

    @property
    def own_voice(self) -> bool:
        """Whether the frame just cancelled held only what the canceller leaves of the
        satellite's own voice (``TalkOver.own_voice``): no context for a search."""
        return self.talk_over is not None and self.talk_over.own_voice

    @property
    def listens(self) -> bool:
        """Whether speech over a reply pauses it (echo on, hearing while speaking on)."""
        return self.talk_over is not None

    def cancel_echo(
        self, frame: AudioChunk, events: list[Event], actions: list[Action]
    ) -> AudioChunk:
        """The microphone with the speaker's echo taken out; while speaking, a stop word
        heard in what is left adds a ``StopSaid`` to ``actions``."""
        stages, supervisor = self.stages, self.supervisor
        echo, spotter = stages.echo, stages.stop_words
        if echo is None:
            return frame
        failures = supervisor.errors_by_stage.get(echo.name, 0)
        cancelled = supervisor.guard(echo, echo.process, frame, frame, events)
        if spotter is None:
            return cancelled
        if supervisor.errors_by_stage.get(echo.name, 0) != failures:
            spotter.reset()  # the canceller starts again: what the gate knew of it is gone
            if self.talk_over is not None:
                self.talk_over.reset()
        # the double-talk checks measure the filter's output (before a residual echo gate)
        linear = echo.linear if echo.linear is not None else cancelled
        if self.talk_over is not None:  # what was played under this frame, what was left
            self.talk_over.played(echo.reference_power, linear, learn=self.speaking)
        # a stop word said over the reply still stops it at once once it is paused
        playing = (self.speaking or self.paused_at is not None) and echo.cancelling
        nothing: StopHeard | None = None
        heard = lambda f: spotter.hear(frame, f, playing, linear)  # noqa: E731
        said = supervisor.guard(spotter, heard, cancelled, nothing, events)
        if said is not None:
            _LOGGER.info(
                "Heard %r over the reply (%.1f dB over its echo)", said.word, said.margin_db
            )
            actions.append(StopSaid(said.timestamp_seconds, word=said.word))
            self._resume = False
            if self.speaking and self.talk_over is not None:
                # what was said is heard too (``heard_over``): the spotter takes more than
                # its words for them, and a command said over the reply must not be lost
                since = self.talk_over.speech_since
                latest = said.timestamp_seconds - STOP_WORD_SECONDS
                self._stop_onset = latest if since is None else max(since, latest - 0.5)
        return cancelled

    def barge_in(self, hit: WakeHit, actions: list[Action]) -> None:
        """The wake word heard: if over a reply, a ``BargeIn`` (the player stops) and the
        loop listens as if the satellite had stopped speaking."""
        if self.speaking:
            self.speaking = False
            self._spoken_over()
            actions.append(BargeIn(round(hit.timestamp_seconds, 3), wake_word=hit.wake_word))

    def set_speaking(self, speaking: bool) -> None:
        """The satellite starts or stops speaking (a run of speech starts afresh)."""
        if self.talk_over is not None and speaking != self.speaking:
            if speaking:
                self.talk_over.start_reply()
                self._stop_onset = None
            else:
                self.talk_over.end_reply()  # (a reply paused or barged into already stopped)
        self.speaking = speaking

    def over_reply(
        self,
        frame: AudioChunk,
        events: list[Event],
        actions: list[Action],
        record: Callable[[AudioChunk, float, list[Event]], None],
        listen_from: Callable[[float, list[Event]], None],
    ) -> bool:
        """While speaking (hearing while speaking on, no wake word in ``frame``): the VAD
        on the echo-cancelled ``frame``; someone speaking over the reply pauses it and is
        recorded (``record``: going on from the utterance before the reply; else
        ``listen_from`` their onset, as after a wake word). False: the frame goes the
        usual way (an utterance under way is not heard over the satellite's voice)."""
        vad, recorder = self.stages.vad, self.stages.recorder
        waiting = waiting_to_follow_on(recorder)
        if not self.speaking or not self.listens or (recorder.active and not waiting):
            return False
        probability = self.supervisor.guard(vad, vad.process, frame, 0.0, events)
        onset = self.heard_over(frame, probability, actions)
        if waiting:  # the window's clock runs on; until the gate agrees, nobody spoke
            if onset is not None:  # the run the gate let through: speech, from its onset
                for past in [f for f in recorder.frames if f.timestamp_seconds >= onset]:
                    record(past, 1.0, events)
            record(frame, 0.0 if onset is None else probability, events)
            return True
        recorder.remember(frame)
        if onset is not None:
            listen_from(onset, events)
        return True

    def heard_over(
        self, frame: AudioChunk, probability: float, actions: list[Action]
    ) -> float | None:
        """While speaking: ``frame`` (echo-cancelled) and the VAD's speech probability.
        When someone speaks over the reply, the onset of their speech, s, and a
        ``ReplyPaused`` in ``actions``; the loop then listens as if the satellite had
        stopped speaking."""
        if self.talk_over is None or not self.speaking:
            return None
        stop_onset, self._stop_onset = self._stop_onset, None
        if stop_onset is not None:  # stopped (StopSaid): heard, never resumed
            self.pause(stop_onset, frame.end_seconds)
            self._resume = False
            return stop_onset
        onset = self.talk_over.hear(frame.timestamp_seconds, probability)
        if onset is None:
            return None
        _LOGGER.info(
            "Heard speech over the reply from %.2f s (%.1f dB over its echo): pausing it",
            onset,
            self.talk_over.last_excess_db,
        )
        actions.append(self.pause(onset, frame.end_seconds))
        return onset

    def pause(self, onset_seconds: float, at_seconds: float) -> ReplyPaused:
        """Pause the reply for someone who began speaking at ``onset_seconds``: the loop
        listens as if the satellite had stopped speaking; ``settle`` decides the rest."""
        self.speaking = False
        self._spoken_over()
        self.paused_at, self._resume = onset_seconds, True
        return ReplyPaused(round(at_seconds, 3), onset_seconds=round(onset_seconds, 3))

    def _to_ask_again(self, answer: AnswerDue) -> bool:
        """Whether ``answer``, to speech over the reply, is asked about once more: what
        the canceller leaves of the reply's echo under the person leads the recognizer
        to sure but wrong commands ("i need help" -> VolumeUp, 0.91 sure), so anything
        but a stop is (``frontend.echo.ask_again_over_reply``); the person says it again
        with the reply stopped."""
        return (
            self.talk_over is not None
            and self.talk_over.ask_again
            and not answer.doubtful
            and answer.result.intent not in STOPPING
        )

    def _spoken_over(self) -> None:
        """Someone spoke over the reply: what the gates measure on it is not the
        satellite's own voice, and their margins do not learn from it."""
        if self.talk_over is not None:
            self.talk_over.start_reply()
        if self.stages.stop_words is not None:
            self.stages.stop_words.spoken_over()

    def settle(
        self, actions: list[Action], hearing: bool, settled: bool, at_seconds: float
    ) -> list[Action]:
        """``actions`` as the app is to carry them out while a paused reply waits: what
        was said over it and not understood is not answered; once nobody is heard
        (``hearing`` False) and understanding has ``settled``, a ``ReplyResumed`` if
        nothing answered instead (see the module's docstring)."""
        if self.paused_at is None:
            return actions
        kept: list[Action] = []
        for taken in actions:
            action = taken
            if isinstance(taken, AnswerDue) and taken.result.intent is None:
                _LOGGER.info("Not understood over the reply (%s): no answer", taken.utterance_id)
                continue
            if isinstance(taken, AnswerDue) and self._to_ask_again(taken):
                _LOGGER.info(
                    "Heard %s over the reply (%r): asking once more",
                    taken.result.intent,
                    taken.result.text,
                )
                action = dataclasses.replace(taken, doubtful=True)
            if isinstance(action, AnswerDue | StopSaid | BargeIn):
                self._resume = False  # answered (or stopped) instead
            kept.append(action)
        if not hearing and settled:
            if self._resume:
                kept.append(ReplyResumed(round(at_seconds, 3)))
            self.paused_at, self._resume = None, False
        return kept

    def reset(self) -> None:
        self.speaking = False
        self.paused_at, self._resume, self._stop_onset = None, False, None
        if self.talk_over is not None:
            self.talk_over.start_reply()  # what it learnt of the room stays, as the canceller's
