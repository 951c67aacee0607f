"""How loud the audio is against the room and against the person speaking.

In a room full of other voices (babble, a television) the VAD hears speech in every
frame, so trailing silence never came and an utterance ran on to its longest (15 s), the
others' words heard as part of the command, and after it the room's voices opened a
follow-on of their own. The person speaking to the satellite is louder than that room
(closer to it): when their speech ends, the level falls back to the room's.
``LevelContrast`` follows the room's floor (a low percentile of the last few seconds
heard outside an utterance's speech) and the loudest stretch of the utterance, and says
when a frame lies closer to the floor than to the speech (``at_room_level``) and whether
it stands out of the room at all (``above_room``): above its floor, and above its loud
moments too (a high percentile), for a room of other voices rises well above its floor
between their pauses and would otherwise open the answer to a question on their words.

The recorder uses it twice, where the VAD alone cannot tell: an utterance also ends after
a stretch of speech at the room's level somewhat longer than the trailing silence (in a
quiet room or steady noise the VAD ends it first: there the quieter ends of words lie
near the floor and must not be cut), and a follow-on must stand out of the room to
begin. When the speech stands less than ``MIN_CONTRAST_DB`` above the floor (a very loud
room) nothing is said against the room and the VAD alone decides, as before.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from ..audio.chunk import FRAME_MS, AudioChunk

#: Frames averaged into one level (50 ms: a syllable's vowel, not a single pitch period).
SMOOTH_FRAMES = 5
#: The room's floor: this percentile of the levels over the last ``FLOOR_SECONDS``.
FLOOR_PERCENTILE = 20.0
FLOOR_SECONDS = 3.0
#: The floor is recomputed every this many frames (a percentile of 300 levels).
FLOOR_EVERY_FRAMES = 10
#: The room's loud moments: this percentile of the same levels. A frame stands out of the
#: room when it is ``MIN_RISE_DB`` above the floor and ``ABOVE_LOUD_DB`` above these (in
#: steady noise they lie 1-2 dB above the floor, so only the floor counts there; among
#: people talking 20 dB below the person, 7-9 dB).
LOUD_PERCENTILE = 90.0
ABOVE_LOUD_DB = 3.0
#: Speech must stand this far above the floor before a frame is judged against it, dB.
MIN_CONTRAST_DB = 12.0
#: A frame below ``floor + max(MIN_RISE_DB, RISE_SHARE * (speech - floor))`` is the
#: room's, not the person's.
MIN_RISE_DB = 6.0
RISE_SHARE = 0.45
#: Speech at the room's level ends an utterance when it lasts this much longer than the
#: trailing silence: where the VAD can tell, it ends it first.
RUN_EXTRA_SECONDS = 0.3
#: The least of the room an utterance's onset leaves when its first frames are taken out
#: of the room's (``forget_onset``), s.
MIN_ROOM_SECONDS = 1.0
_DB_FLOOR = -100.0


class LevelContrast:
    """The level of each frame against the room's floor and the utterance's speech.

    Fed every frame as the microphone gave it (``observe``), before noise suppression and
    gain, which move with the speech.
    """

    def __init__(self) -> None:
        #: The room's frames: (end, s; level, dB).
        self._levels: deque[tuple[float, float]] = deque(
            maxlen=round(FLOOR_SECONDS * 1000 / FRAME_MS)
        )
        self._powers: deque[float] = deque(maxlen=SMOOTH_FRAMES)
        self._since_floor = 0
        self._seen_until = float("-inf")
        self.floor_db: float | None = None
        self.loud_db: float | None = None
        self.level_db = _DB_FLOOR
        self.speech_db: float | None = None
        #: In speech: where the person's speech ended before the run of frames at the
        #: room's level, and the run's length, s.
        self._run_from: float | None = None
        self._run_seconds = 0.0

    def observe(self, frame: AudioChunk, of_room: bool) -> None:
        """Take in the next frame (every frame; a frame seen before, replayed from the
        recorder's history, is not taken in twice). ``of_room``: the frame may count
        towards the room's floor and loud moments (not while an utterance's speech is
        recorded: a long command's quieter sounds would lift the floor to them; nor the
        wake word's tail, nor the satellite's own voice: see ``forget_since``)."""
        if not self.is_current(frame):
            return
        self._seen_until = frame.end_seconds
        samples = frame.to_int16().astype(np.float64) / 32768.0
        self._powers.append(float(np.mean(samples * samples)) if len(samples) else 0.0)
        power = sum(self._powers) / len(self._powers)
        self.level_db = 10.0 * math.log10(power) if power > 0 else _DB_FLOOR
        if not of_room:
            return
        self._levels.append((frame.end_seconds, self.level_db))
        self._since_floor += 1
        if self.floor_db is None or self._since_floor >= FLOOR_EVERY_FRAMES:
            self._measure_room()

    def forget_since(self, seconds: float) -> None:
        """Take the frames heard after ``seconds`` out of the room's: a wake word, found
        once it has been said, was the person's voice, not the room's (in a quiet room it
        would be the room's loud moments, and a follow-on would have to be louder)."""
        while self._levels and self._levels[-1][0] > seconds:
            self._levels.pop()
        self._measure_room()

    def forget_onset(self, onset_seconds: float) -> None:
        """An utterance's speech began at ``onset_seconds``: the frames heard since, before
        it was found, were the person's (``forget_since``), unless that would leave less
        than ``MIN_ROOM_SECONDS`` of the room (a room that speaks in every frame)."""
        left = sum(1 for end, _ in self._levels if end <= onset_seconds)
        if left * FRAME_MS / 1000.0 >= MIN_ROOM_SECONDS:
            self.forget_since(onset_seconds)

    def _measure_room(self) -> None:
        self._since_floor = 0
        if not self._levels:
            self.floor_db = self.loud_db = None
            return
        levels = np.fromiter((level for _, level in self._levels), float)
        floor, loud = np.percentile(levels, (FLOOR_PERCENTILE, LOUD_PERCENTILE))
        self.floor_db, self.loud_db = float(floor), float(loud)

    def is_current(self, frame: AudioChunk) -> bool:
        """Whether ``frame`` is new or the last one taken in (not one replayed from
        history, whose level is not kept: such frames are not judged against the room)."""
        return frame.end_seconds >= self._seen_until - 1e-6

    def begin_speech(self) -> None:
        """An utterance's speech begins: its loudest stretch is measured from now."""
        self.speech_db = None
        self._run_from = None
        self._run_seconds = 0.0

    def judge(
        self,
        is_speech: bool,
        is_silence: bool,
        in_speech: bool,
        following_on: bool,
        speech_end: float,
    ) -> tuple[bool, bool]:
        """The VAD's word on the current frame (speech, silence) judged against the room:
        in an utterance's speech (``in_speech``; ``speech_end``: where the speech heard
        so far ended, s) the run at the room's level is counted (``speech_ended_at``);
        while a follow-on is awaited (``following_on``) only speech that stands out of
        the room may begin it, and the room's voices count as silence."""
        if in_speech:
            self.judge_in_speech(is_speech, speech_end)
        elif following_on and not self.above_room():
            return False, True
        return is_speech, is_silence

    def judge_in_speech(self, is_speech: bool, speech_end: float) -> None:
        """Judge the current frame of an utterance: ``is_speech`` (the VAD's word) and
        where the speech heard so far ended, s (where a run at the room's level began)."""
        if is_speech and (self.speech_db is None or self.level_db > self.speech_db):
            self.speech_db = self.level_db
        if not self.at_room_level():
            self._run_from = None
            self._run_seconds = 0.0
            return
        if self._run_from is None:
            self._run_from = speech_end
        self._run_seconds += FRAME_MS / 1000.0

    def speech_ended_at(self, trailing_seconds: float) -> float | None:
        """Where the person's speech ended, s, once the run at the room's level since
        has lasted ``RUN_EXTRA_SECONDS`` longer than ``trailing_seconds``; else None."""
        if self._run_seconds >= trailing_seconds + RUN_EXTRA_SECONDS:
            return self._run_from
        return None

    def above_room(self) -> bool:
        """Whether the current frame stands ``MIN_RISE_DB`` above the room's floor and
        ``ABOVE_LOUD_DB`` above its loud moments (True before the floor is known)."""
        if self.floor_db is None or self.loud_db is None:
            return True
        return self.level_db >= max(self.floor_db + MIN_RISE_DB, self.loud_db + ABOVE_LOUD_DB)

    def at_room_level(self) -> bool:
        """Whether the current frame lies closer to the room's floor than to the speech
        (False when the speech does not stand out from the room enough to tell)."""
        if self.speech_db is None or self.floor_db is None:
            return False
        contrast = self.speech_db - self.floor_db
        if contrast < MIN_CONTRAST_DB:
            return False
        return self.level_db < self.floor_db + max(MIN_RISE_DB, RISE_SHARE * contrast)
