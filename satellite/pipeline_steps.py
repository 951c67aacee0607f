"""Steps of the frame loop that need no state of their own: speech rate on its own,
how many frames the loop may take at once, understanding's waiting work, and where the
recorder is (``satellite/pipeline.py`` drives them)."""

from __future__ import annotations

from collections.abc import Callable

from .audio.chunk import AudioChunk
from .events import Event, UtteranceEnded
from .frontend.recorder import Phase, UtteranceRecorder
from .prosody.monitor import ProsodyMonitor
from .stages import Stages
from .supervisor import Supervisor


def prosody_of(
    prosody: ProsodyMonitor, utterance: UtteranceEnded
) -> Callable[[AudioChunk], list[Event]]:
    """The supervised call that measures ``utterance``'s speech rate."""
    return lambda _frame: prosody.process(utterance)


def with_prosody(
    supervisor: Supervisor, stages: Stages, frame: AudioChunk, new: list[Event], events: list[Event]
) -> list[Event]:
    """``new`` and the speech rate of each utterance it ends, when prosody runs on its own
    (with understanding, it runs there)."""
    prosody = stages.prosody
    no_events: list[Event] = []
    if prosody is not None and stages.understanding is None:
        for utterance in [e for e in new if isinstance(e, UtteranceEnded)]:
            measure = prosody_of(prosody, utterance)
            new = new + supervisor.guard(prosody, measure, frame, no_events, events)
    return new


def frames_at_once(stages: Stages, idle: bool) -> int:
    """How many 10 ms frames the loop may take at one wake-up with nothing decided later
    than frame by frame: 1 unless ``idle`` (no wake word heard, the satellite not
    speaking) with no utterance being heard or worked out; then the frames up to the one
    in which the wake word model next decides."""
    understanding = stages.understanding
    if (
        not idle
        or stages.wake is None
        or stages.recorder.active
        or (understanding is not None and not understanding.settled)
    ):
        return 1
    return stages.wake.frames_to_decision()


def understand_more(
    supervisor: Supervisor, stages: Stages, frame: AudioChunk, events: list[Event], at_once: bool
) -> list[Event]:
    """The supervised call that does understanding's waiting work (a frame's share, or
    ``at_once`` all of it) and gives what it concluded."""
    understanding, recorder = stages.understanding, stages.recorder
    if understanding is None:
        return []
    work = understanding.catch_up if at_once else understanding.advance
    nothing: list[Event] = []
    return supervisor.guard(understanding, lambda f: work(f, recorder), frame, nothing, events)


def waiting_to_follow_on(recorder: UtteranceRecorder) -> bool:
    """Whether the recorder listens on after an utterance with no speech yet."""
    return recorder.following_on and recorder.phase is Phase.AWAITING_ONSET


def hears_someone(recorder: UtteranceRecorder, over_replies: bool) -> bool:
    """``Pipeline.hearing``: whether someone may be speaking to the satellite: after a
    wake word, until the utterance and the follow-on window after it are over (in
    continuous mode: during an utterance). Waiting for a follow-on does not count when
    speech is heard ``over_replies`` (a reply may start: a person going on is heard over
    it)."""
    if recorder.continuous:
        return recorder.phase is Phase.IN_SPEECH
    if over_replies and waiting_to_follow_on(recorder):
        return False
    return recorder.active


def reset_stages(stages: Stages) -> None:
    """``Pipeline.reset``'s stages: each back to its start."""
    s = stages
    for stage in (s.noise, s.wake_ears, s.gain, s.vad, s.wake, s.recorder, s.understanding):
        if stage is not None:
            stage.reset()
