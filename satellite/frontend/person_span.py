"""Where the person's own words lie in an utterance heard among other voices.

In a room of other voices (people talking, a television) an utterance's audio holds more
than the command: the pre-roll and the gap after the wake word before it, and the room's
voices after it until its end is noticed. The grammar search makes words of all of it,
the optional words around a command ("would you", "i'd like to", "for me") soak up the
others' speech, and a command heard right scores too low to be believed, or the whole
comes out another command. The person speaking to the satellite is louder than that room
(closer to it): their words are where the level stands well above the room's floor.

``person_span`` finds them from the microphone's levels, as ``LevelContrast`` does for
the utterance's end (the same floor, contrast and rise), so the command can be searched
again over them alone (``RoomRules.person_span_steps``, ``HearingSession.search_span_steps``).

Measured first with the span known (``bench/person_span.py --known-spans``): in people
talking 20 dB below the speech, of 21 commands per family, heard right and scored well
enough from 0.5 s before the command to 0.7 s after it: eSpeak NG 5, flite 9, Festival 9;
from 0.1 s before to 0.15 s after: 6 / 14 / 19 (wrong and scored well enough 0 -> 1 / 3 /
1: the satellite asks about every command it hears this way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..audio.chunk import FRAME_MS, AudioChunk
from .expander import STEADY_PERCENTILES
from .level_contrast import FLOOR_PERCENTILE, MIN_CONTRAST_DB, MIN_RISE_DB, SMOOTH_FRAMES

#: The utterance's speech level: this percentile of its frames' levels (its loudest
#: stretch, not one click).
SPEECH_PERCENTILE = 95.0
#: A frame is the person's when it stands this share of the speech's contrast above the
#: room's floor (``MIN_RISE_DB`` at least). Higher than ``LevelContrast``'s rise: the
#: others' loudest syllables in a room of people talking reach about 0.45 of it.
RISE_SHARE = 0.55
#: The person's words are the loud frames around the loudest one, with no gap between
#: them longer than this, s (a pause between words is shorter; the room's syllables
#: before or after the command are further off).
MAX_GAP_SECONDS = 0.35
#: The span reaches this far before the first loud frame and after the last, s: a word's
#: quiet onset ("s", "f") and its fading end lie below the rise.
LEAD_SECONDS = 0.1
TAIL_SECONDS = 0.15
#: A span is only worth searching when it leaves out at least this much of the
#: utterance, s.
MIN_TRIM_SECONDS = 0.3
#: ... and holds at least this much, s (a single loud syllable of the room is no command).
MIN_SPAN_SECONDS = 0.3
#: Other voices count when the room is unsteady and its floor lies at most this far below
#: the person's speech, dB. Measured over "okay nabu, <command>" scenes (one voice per
#: family, 7 commands each): babble, a television and people talking 20 dB below the
#: speech 21.1-26.5 dB, 10 dB below 11.7-17.7; a quiet room (unsteady or not, the
#: synthesized one's hiss) 41.5-56.6.
VOICES_WITHIN_DB = 30.0
#: The band whose level tells other voices from a steady noise, Hz, and how far it must
#: wander there (dB between the ``STEADY_PERCENTILES`` of its levels) for the room to
#: hold them. Over the whole band pink noise 20 dB below the speech wandered 1.0-3.2 dB
#: (its low notes come and go) and babble 2.0-4.6: 9 of 24 pink scenes were judged to
#: hold voices. Between 1 and 4 kHz (4 voices x 6 commands per room, the room's 3 s and
#: the utterance): white and pink noise 20 and 10 dB below 0.3-0.8 dB; babble 3.9-7.6, a
#: television 2.6-6.8, people talking 3.5-11.1.
VOICES_BAND_HZ = (1000.0, 4000.0)
VOICES_SPREAD_DB = 1.5
_POWER_FLOOR = 1e-10


@dataclass(frozen=True, slots=True)
class PersonSpan:
    """Where the person's words lie (``start``, ``end``: timestamps, s) and how far
    their speech stood above the room's floor (dB)."""

    start: float
    end: float
    contrast_db: float


def levels_db(frames: Sequence[AudioChunk]) -> np.ndarray:
    """Each frame's level over the ``SMOOTH_FRAMES`` up to it, dB full scale."""
    return _levels_db(*_frame_rows(frames))


def band_levels_db(frames: Sequence[AudioChunk]) -> np.ndarray:
    """Each frame's level in ``VOICES_BAND_HZ`` over the ``SMOOTH_FRAMES`` up to it, dB
    (a Hann window over each)."""
    if not frames:
        return np.zeros(0)
    return _band_levels_db(*_frame_rows(frames), frames[0].rate_hz)


def _levels_db(samples: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``levels_db`` of the frames' rows (``_frame_rows``)."""
    return _smoothed_db((samples**2).sum(axis=1) / lengths)


def _band_levels_db(samples: np.ndarray, lengths: np.ndarray, rate_hz: int) -> np.ndarray:
    """``band_levels_db`` of the frames' rows (``_frame_rows``), sampled at ``rate_hz``."""
    width = samples.shape[1]
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(width), axis=1)) ** 2
    hz = np.fft.rfftfreq(width, 1.0 / rate_hz)
    low, high = VOICES_BAND_HZ
    return _smoothed_db(spectrum[:, (hz >= low) & (hz < high)].sum(axis=1) / lengths)


def _frame_rows(frames: Sequence[AudioChunk]) -> tuple[np.ndarray, np.ndarray]:
    """The frames' samples (full scale 1) as rows, a shorter one padded with zeros, and
    each one's length (one array op over them all: a Pi has 3 s and more of frames)."""
    rows = [f.to_int16() for f in frames]
    lengths = np.array([max(1, len(r)) for r in rows], np.float64)
    width = max((len(r) for r in rows), default=1)
    if all(len(r) == width for r in rows) and rows:
        matrix = np.stack(rows).astype(np.float64)
    else:
        matrix = np.zeros((len(rows), width))
        for index, row in enumerate(rows):
            matrix[index, : len(row)] = row
    return matrix / 32768.0, lengths


def _smoothed_db(power: np.ndarray) -> np.ndarray:
    """``power`` per frame averaged over the ``SMOOTH_FRAMES`` up to each, dB."""
    total = np.concatenate([[0.0], np.cumsum(power)])
    index = np.arange(1, len(power) + 1)
    begin = np.maximum(0, index - SMOOTH_FRAMES)
    smoothed = (total[index] - total[begin]) / (index - begin)
    return np.asarray(10.0 * np.log10(np.maximum(smoothed, _POWER_FLOOR)))


@dataclass(frozen=True, slots=True)
class RoomLevels:
    """The levels (dB) of the frames before an utterance and of the utterance, and what
    they say of the room."""

    levels: np.ndarray
    #: Where the utterance's frames begin in ``levels``.
    first: int
    #: The room's floor and the utterance's speech level, dB.
    floor: float
    speech: float
    #: Whether the room's level in the speech band wanders (other voices, a television;
    #: ``VOICES_SPREAD_DB``): a quiet room, a fan, hiss or pink noise is steady.
    unsteady: bool

    @classmethod
    def of(cls, room: Sequence[AudioChunk], utterance: Sequence[AudioChunk]) -> RoomLevels:
        """``room`` (the frames before) and ``utterance`` (not empty), raw microphone
        frames."""
        frames = [*room, *utterance]
        rows = _frame_rows(frames)  # once, for both levels
        levels = _levels_db(*rows)
        band = _band_levels_db(*rows, frames[0].rate_hz)
        low, high = np.percentile(band, STEADY_PERCENTILES)
        return cls(
            levels,
            len(room),
            float(np.percentile(levels, FLOOR_PERCENTILE)),
            float(np.percentile(levels[len(room) :], SPEECH_PERCENTILE)),
            bool(high - low >= VOICES_SPREAD_DB),
        )

    @property
    def contrast_db(self) -> float:
        """How far the speech stands above the room's floor, dB."""
        return self.speech - self.floor


def other_voices(room: Sequence[AudioChunk], utterance: Sequence[AudioChunk]) -> bool:
    """Whether other voices (people talking, a television) filled the room around
    ``utterance`` (raw microphone frames; ``room``: those before it): the room's level
    wanders, and its floor lies within ``VOICES_WITHIN_DB`` of the person's speech. A
    room judged quiet by its loudness may hold them: people talking 20 dB below."""
    if not utterance:
        return False
    judged = RoomLevels.of(room, utterance)
    return judged.unsteady and judged.contrast_db <= VOICES_WITHIN_DB


def person_span(room: Sequence[AudioChunk], utterance: Sequence[AudioChunk]) -> PersonSpan | None:
    """The person's words in ``utterance`` (raw microphone frames), judged against the
    room's floor over ``room`` and the utterance (the frames before it and it): None in a
    steady room (a quiet one, a fan, hiss: no other voices to leave out, see
    ``RoomLevels.unsteady``), when the speech does not stand ``MIN_CONTRAST_DB`` above
    the room (no telling), or when the span would leave out too little of the utterance
    or hold too little."""
    if not utterance:
        return None
    judged = RoomLevels.of(room, utterance)
    if not judged.unsteady:
        return None
    own = judged.levels[judged.first :]
    floor, contrast = judged.floor, judged.contrast_db
    if contrast < MIN_CONTRAST_DB:
        return None
    loud = np.flatnonzero(own >= floor + max(MIN_RISE_DB, RISE_SHARE * contrast))
    if not len(loud):
        return None
    first, last = _around_loudest(loud, int(np.argmax(own)))
    frame_s = FRAME_MS / 1000.0
    # a level is over the frames up to it: the loud stretch began up to SMOOTH_FRAMES before
    first = max(0, first - (SMOOTH_FRAMES - 1))
    begin = utterance[0].timestamp_seconds
    finish = utterance[-1].timestamp_seconds + frame_s
    start = max(begin, utterance[first].timestamp_seconds - LEAD_SECONDS)
    end = min(finish, utterance[last].timestamp_seconds + frame_s + TAIL_SECONDS)
    if end - start < MIN_SPAN_SECONDS or (finish - begin) - (end - start) < MIN_TRIM_SECONDS:
        return None
    return PersonSpan(round(start, 4), round(end, 4), round(contrast, 2))


def _around_loudest(loud: np.ndarray, loudest: int) -> tuple[int, int]:
    """The first and last of the ``loud`` frame indices (ascending) reached from
    ``loudest`` (one of them) over gaps no longer than ``MAX_GAP_SECONDS``."""
    gap = round(MAX_GAP_SECONDS * 1000 / FRAME_MS)
    at = int(np.searchsorted(loud, loudest))
    first = last = at
    while first > 0 and loud[first] - loud[first - 1] <= gap:
        first -= 1
    while last < len(loud) - 1 and loud[last + 1] - loud[last] <= gap:
        last += 1
    return int(loud[first]), int(loud[last])
