"""Cut an utterance out of the frame stream: onset, pre-roll, trailing silence, limits.

The recorder is pure logic over 10 ms frames and their speech probabilities.

After a wake word the onset search starts ``WAKE_SEARCH_BACK_SECONDS`` before the
detection, which lands inside or just after the wake word (microWakeWord fires
~0.1-0.3 s after the word ends). Speech found there first is taken as the wake word's
tail: the command's onset is the first speech that follows a short gap. If the person
ran straight on without a gap, the onset is the detection time itself. In continuous
mode (no wake word), every onset after silence starts an utterance.

After the wake word's utterance ends, the recorder listens on for ``follow_on_ms``
from the end of its speech: speech that begins within that window starts another
utterance with no wake word (a *follow-on*; at most ``MAX_FOLLOW_ONS`` after one wake
word). Its audio reaches back to the start of the utterance before it (at most
``FOLLOW_ON_CARRY_SECONDS``): it is the whole sentence, pause included, as a listener
would take it in. A person who pauses mid-sentence ("I feel dizzy, ... please get the
nurse") is then heard to the end, even when the pause ended the first half as a command.
No window follows an utterance cut at its longest (that was no pause). When the window
passes in silence, the recorder goes idle without an event.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from enum import Enum

from ..audio.chunk import FRAME_MS, AudioChunk, join_frames
from ..events import Event, ListeningTimeout, SpeechStarted, UtteranceEnded
from ..ids import id_counter
from .level_contrast import LevelContrast
from .settings import RecorderSettings

#: How far before the wake detection the onset search begins, s.
WAKE_SEARCH_BACK_SECONDS = 0.35
#: The wake phrase ends about when it is detected and lasts at most this long, s.
WAKE_PHRASE_SECONDS = 1.2
#: Silence that separates the wake word from the command, s. Longer than the stop
#: closures inside "okay nabu" (~60-100 ms), which must not count as a gap.
WAKE_GAP_SECONDS = 0.15
#: Longest the wake word's tail may run past the detection before it counts as command.
WAKE_TAIL_LIMIT_SECONDS = 0.3
#: After a wake word and a gap, the pre-roll reaches back no further than the gap's start
#: (the wake word's tail, "...bu", was heard as a word: "yes" as "get nurse"), but keeps
#: at least this much before the command's onset, s.
WAKE_GAP_KEEP_SECONDS = 0.2
#: Audio kept after the end of speech, s (unvoiced final consonants).
TAIL_KEEP_SECONDS = 0.2
#: Below ``threshold - hysteresis`` a frame counts as silence.
HYSTERESIS = 0.15
#: Follow-on utterances heard after one wake word, at most: each one opens the window
#: again, and a television must not keep the satellite listening without end.
MAX_FOLLOW_ONS = 2
#: A follow-on's audio reaches back this far at most, s: the recognizer hears all of it
#: in the frame that starts the follow-on (about a tenth of it in time on one x86 core),
#: and the sentences worth hearing whole are short.
FOLLOW_ON_CARRY_SECONDS = 5.0
_FRAME_SECONDS = FRAME_MS / 1000.0


class Phase(Enum):
    """Where the recorder is in an utterance."""

    IDLE = "idle"
    WAKE_TAIL = "wake_tail"
    AWAITING_ONSET = "awaiting_onset"
    IN_SPEECH = "in_speech"


class UtteranceRecorder:
    """Turns (frame, speech probability) pairs into utterance events."""

    name = "recorder"

    def __init__(
        self,
        settings: RecorderSettings,
        threshold: float,
        continuous: bool = False,
        lag_seconds: float = 0.0,
        warm_up_seconds: float = 0.5,
        end_lag_seconds: float | None = None,
    ) -> None:
        self.settings = settings
        self.threshold = threshold
        self.lag_seconds = lag_seconds
        self.end_lag_seconds = lag_seconds if end_lag_seconds is None else end_lag_seconds
        self.continuous = continuous
        self._pre_roll_seconds = settings.pre_roll_ms / 1000.0
        self._follow_on_seconds = settings.follow_on_ms / 1000.0
        history_seconds = WAKE_SEARCH_BACK_SECONDS + max(self._pre_roll_seconds, warm_up_seconds)
        history_frames = int(history_seconds / _FRAME_SECONDS) + 1
        self._history: deque[AudioChunk] = deque(maxlen=history_frames)
        self._ids = id_counter("u")
        self.levels = LevelContrast()  # fed every frame by the pipeline: see its docs
        self.reset()

    # --- public -------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Current phase."""
        return self._phase

    @property
    def active(self) -> bool:
        """True while an utterance is being looked for or recorded."""
        return self._phase is not Phase.IDLE

    @property
    def following_on(self) -> bool:
        """True while listening on after an utterance, no wake word needed (a follow-on)."""
        return self._follow_on_until is not None

    @property
    def frames(self) -> list[AudioChunk]:
        """Frames of the utterance so far (from the start of its audio, pre-roll included)."""
        return list(self._frames)

    def quiet_since(self, now: float) -> float:
        """Time since the speech ended (the VAD's lag taken off), s; 0 while speaking. The
        run of silence only starts once the speech probability has fallen below the
        threshold less the hysteresis, which the VAD takes a while to reach; a short
        endpoint counts from the end of speech instead."""
        if self._phase is not Phase.IN_SPEECH or self._silence_seconds <= 0:
            return 0.0
        return max(0.0, now - self._last_speech_end)

    def end_now(self, now: float, reason: str) -> list[Event]:
        """Finish the utterance in speech at once (e.g. the command is already complete)."""
        return self._finish(now, reason) if self._phase is Phase.IN_SPEECH else []

    def close_follow_on(self) -> None:
        """No follow-on after the utterance just ended (a complete command): go idle."""
        if self._follow_on_until is not None and self._phase is Phase.AWAITING_ONSET:
            self.reset()

    def reset(self) -> None:
        """Drop any utterance in progress (history of recent audio is kept)."""
        self._frames: list[AudioChunk] = []
        self._utterance_id = ""
        self._wake_seconds = 0.0
        self._speech_run_start: float | None = None
        self._speech_run_seconds = 0.0
        self._silence_seconds = 0.0
        self._onset_seconds = 0.0
        self._last_speech_end = 0.0
        #: After a wake word: when the silence that followed it began, s (None: none yet).
        self._gap_from: float | None = None
        #: While following on: when the window for the follow-on's onset closes, s.
        self._follow_on_until: float | None = None
        self._follow_ons = 0
        #: While following on: the previous utterance's frames, which a follow-on's audio
        #: begins with.
        self._carried: list[AudioChunk] = []
        self.asked = False  # looking for, or hearing, an answer (``listen_for_answer``)
        if self.continuous:
            self._begin(Phase.AWAITING_ONSET, 0.0)
        else:
            self._phase = Phase.IDLE

    def remember(self, frame: AudioChunk) -> None:
        """Keep a frame heard while idle, for pre-roll."""
        self._history.append(frame)

    def start_after_wake(self, wake_seconds: float) -> tuple[list[AudioChunk], list[AudioChunk]]:
        """Begin looking for the command after a wake word. Returns ``(warm_up, search)``:
        run both through a freshly reset VAD now, but pass only the ``search`` frames (and
        their probabilities) to ``update``. A VAD starts cold and reports low
        probabilities for its first ~150 ms, not to be taken for the gap after the wake."""
        self._begin(Phase.WAKE_TAIL, wake_seconds)  # idle: reset() ended any follow-on
        self.levels.forget_since(wake_seconds - WAKE_PHRASE_SECONDS)  # the person's voice
        return split_at(self._history, wake_seconds - WAKE_SEARCH_BACK_SECONDS - 1e-9)

    def listen_for_answer(self, at_seconds: float) -> None:
        """Look for the answer to a question said by ``at_seconds``: no wake word's tail
        to skip (which, with other voices in the room, took them for the answer), an
        onset after it that stands out of the room."""
        self._begin(Phase.AWAITING_ONSET, at_seconds)
        self._gap_from = at_seconds  # nothing before it is the answer
        self.asked = True

    def update(self, frame: AudioChunk, probability: float) -> list[Event]:
        """Feed the next frame and its speech probability; return events it completes."""
        if self._phase is Phase.IDLE:
            self.remember(frame)
            return []
        if not self._frames or frame.timestamp_seconds > self._frames[-1].timestamp_seconds:
            self._frames.append(frame)
        if self.continuous and self._phase is Phase.AWAITING_ONSET and len(self._frames) > 1:
            del self._frames[:-1]  # do not grow while waiting: history covers the pre-roll
        if not self._history or frame.timestamp_seconds > self._history[-1].timestamp_seconds:
            self._history.append(frame)

        start = frame.timestamp_seconds
        end = frame.end_seconds
        is_speech = probability >= self.threshold
        is_silence = probability < self.threshold - HYSTERESIS
        if self.settings.against_room_level and self.levels.is_current(frame):
            in_speech = self._phase is Phase.IN_SPEECH
            is_speech, is_silence = self.levels.judge(
                is_speech,
                is_silence,
                in_speech,
                self.following_on or self.asked,
                self._last_speech_end,
            )
        if is_speech:
            if self._speech_run_start is None:
                self._speech_run_start = start - self.lag_seconds
            self._speech_run_seconds += _FRAME_SECONDS
            self._silence_seconds = 0.0
            self._last_speech_end = end - self.end_lag_seconds
        elif is_silence:
            self._speech_run_start = None
            self._speech_run_seconds = 0.0
            self._silence_seconds += _FRAME_SECONDS

        if self._phase is Phase.WAKE_TAIL:
            return self._wake_tail(end)
        if self._phase is Phase.AWAITING_ONSET:
            return self._awaiting_onset(end)
        return self._in_speech(end)

    # --- phases -------------------------------------------------------------------

    def _wake_tail(self, now: float) -> list[Event]:
        if self._silence_seconds >= WAKE_GAP_SECONDS:
            self._phase = Phase.AWAITING_ONSET
            self._gap_from = now - self._silence_seconds
            return []
        if now - self._wake_seconds >= WAKE_TAIL_LIMIT_SECONDS and self._speech_run_start:
            return self._onset(self._wake_seconds)
        return []

    def _awaiting_onset(self, now: float) -> list[Event]:
        min_speech = self.settings.min_speech_ms / 1000.0
        if self._speech_run_start is not None and self._speech_run_seconds >= min_speech:
            return self._onset(self._speech_run_start)
        if self._follow_on_until is not None:
            if now >= self._follow_on_until:
                self.reset()  # nothing followed: the conversation is over
            return []
        timed = not self.continuous or self.asked  # listening on: only for an answer
        if timed and now - self._wake_seconds >= self.settings.listen_timeout_seconds:
            event = ListeningTimeout(timestamp_seconds=round(now, 3), utterance_id=self._take_id())
            self.reset()
            return [event]
        return []

    def _in_speech(self, now: float) -> list[Event]:
        trailing = self.settings.trailing_silence_ms / 1000.0
        if self._silence_seconds >= trailing:
            return self._finish(now, "silence")
        if (ended := self.levels.speech_ended_at(trailing)) is not None:  # the room speaks on
            self._last_speech_end = min(self._last_speech_end, ended)
            return self._finish(now, "silence")
        if now - self._onset_seconds >= self.settings.max_utterance_seconds:
            self._last_speech_end = now
            return self._finish(now, "max_length")
        return []

    # --- helpers ------------------------------------------------------------------

    def _take_id(self) -> str:
        """This utterance's id, ``u<boot id>-<n>``, numbered when first reported: no gaps."""
        if not self._utterance_id:
            self._utterance_id = next(self._ids)
        return self._utterance_id

    def _begin(self, phase: Phase, wake_seconds: float) -> None:
        self._phase = phase
        self._wake_seconds = wake_seconds
        self.asked = False
        self._gap_from = None
        self._utterance_id = ""  # taken when something is reported: ids have no gaps
        self._frames = []
        self._speech_run_start = None
        self._speech_run_seconds = 0.0
        self._silence_seconds = 0.0

    def _onset(self, onset_seconds: float) -> list[Event]:
        self._phase = Phase.IN_SPEECH
        self._onset_seconds = onset_seconds
        self.levels.forget_onset(onset_seconds)  # its first frames were the person's
        self.levels.begin_speech()
        self._silence_seconds = 0.0
        if self._follow_on_until is not None:
            self._follow_ons += 1
            self._frames = self._carried + self._frames
            self._carried = []
        else:
            audio_from = audio_start(onset_seconds, self._pre_roll_seconds, self._gap_from)
            self._frames = with_pre_roll(self._history, self._frames, audio_from)
        return [
            SpeechStarted(timestamp_seconds=round(onset_seconds, 3), utterance_id=self._take_id())
        ]

    def _finish(self, now: float, reason: str) -> list[Event]:
        span = (self._onset_seconds, self._last_speech_end)
        event = utterance_ended(self._take_id(), self._frames, span, now, reason)
        if self.continuous:
            self._begin(Phase.AWAITING_ONSET, now)
        elif reason == "max_length":  # a pause did not end it: nothing follows on
            self.reset()
        else:
            self._listen_on(now)
        return [event]

    def _listen_on(self, now: float) -> None:
        """After an utterance (wake word mode): open the follow-on window, or go idle."""
        until = self._last_speech_end + self._follow_on_seconds
        if self._follow_on_seconds <= 0 or self._follow_ons >= MAX_FOLLOW_ONS or now >= until:
            self.reset()
            return
        carried = self._frames[-round(FOLLOW_ON_CARRY_SECONDS / _FRAME_SECONDS) :]
        self._begin(Phase.AWAITING_ONSET, now)  # keeps the count of follow-ons
        self._follow_on_until = until
        self._carried = carried


def of_room(recorder: UtteranceRecorder, speaking: bool) -> bool:
    """Whether the frame heard now is the room's (``LevelContrast.observe``): not the
    person's utterance or the wake word's tail, not the satellite's own voice
    (``speaking``)."""
    return recorder.phase not in (Phase.IN_SPEECH, Phase.WAKE_TAIL) and not speaking


def utterance_ended(
    utterance_id: str,
    frames: list[AudioChunk],
    span: tuple[float, float],
    now: float,
    reason: str,
) -> UtteranceEnded:
    """The utterance of ``frames`` whose speech spans ``span`` (onset, end), ended at
    ``now``: its audio kept to ``TAIL_KEEP_SECONDS`` after the end of speech."""
    onset, end = span
    audio = join_frames([f for f in frames if f.timestamp_seconds < end + TAIL_KEEP_SECONDS])
    return UtteranceEnded(
        timestamp_seconds=round(now, 3),
        utterance_id=utterance_id,
        start_seconds=round(onset, 3),
        end_seconds=round(end, 3),
        audio_start_seconds=round(audio.timestamp_seconds, 3),
        reason=reason,
        audio=audio,
    )


def split_at(
    frames: Iterable[AudioChunk], seconds: float
) -> tuple[list[AudioChunk], list[AudioChunk]]:
    """``frames`` split into those that begin before ``seconds`` and the rest."""
    kept = list(frames)
    return (
        [f for f in kept if f.timestamp_seconds < seconds],
        [f for f in kept if f.timestamp_seconds >= seconds],
    )


def with_pre_roll(
    history: Iterable[AudioChunk], frames: list[AudioChunk], audio_from: float
) -> list[AudioChunk]:
    """The utterance's audio from ``audio_from``: the frames before its first recorded one
    come from the recent ``history``."""
    first = frames[0].timestamp_seconds if frames else float("inf")
    earlier = [f for f in history if f.timestamp_seconds < first]
    return [f for f in earlier + frames if f.timestamp_seconds >= audio_from - 1e-9]


def audio_start(onset_seconds: float, pre_roll_seconds: float, gap_from: float | None) -> float:
    """Where an utterance's audio begins: ``pre_roll_seconds`` before its onset, but after
    a wake word not before the gap that followed it (``gap_from``, None: no gap), save the
    last ``WAKE_GAP_KEEP_SECONDS`` before the onset."""
    audio_from = onset_seconds - pre_roll_seconds
    if gap_from is None:
        return audio_from
    return max(audio_from, min(gap_from, onset_seconds - WAKE_GAP_KEEP_SECONDS))
