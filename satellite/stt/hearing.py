"""What the recognizer hears: the microphone as it was, or denoised when the room is loud.

The acoustic model was trained on clean speech. In a quiet room noise suppression only
distorts the spectrum it knows, and the raw audio is heard better; in loud noise it is
the other way round. So the choice is made per utterance, from the signal-to-noise ratio
of the audio just before the command and its first syllables.
"""

from __future__ import annotations

import collections
import math
from typing import TypeVar

import numpy as np

from ..audio.chunk import AudioChunk, join_frames
from ..errors import MissingDependencyError

T = TypeVar("T")

#: The loudest frames that stand for the speech level, and the share of the quietest
#: frames that stands for the noise floor.
_LOUDEST_FRAMES = 5
_QUIET_SHARE = 0.3
#: The least context (audio before a command, not the satellite's own voice) a search
#: takes its cepstral mean from, s (``MicHistory.context``).
MIN_CONTEXT_SECONDS = 0.3
#: The room before an utterance a suppressor heard again from a fresh start learns the
#: noise from (``stt.other_way``), s.
SETTLE_SECONDS = 1.0


class MicHistory:
    """The last seconds of 10 ms microphone frames, raw and denoised, by timestamp (enough
    to hear a command again, denoised, when the room proves loud)."""

    def __init__(self, seconds: float = 10.0) -> None:
        self._raw: dict[float, AudioChunk] = {}
        self._denoised: dict[float, AudioChunk] = {}
        self._order: collections.deque[float] = collections.deque()
        self._own: set[float] = set()
        self._speaking: set[float] = set()
        self._limit = int(seconds * 100)

    def add(
        self, raw: AudioChunk, denoised: AudioChunk, own_voice: bool = False, speaking: bool = False
    ) -> None:
        """One frame as heard and denoised (``own_voice``: it held only what the echo
        canceller left of the satellite's own voice, see ``context``; ``speaking``: the
        satellite was speaking, see ``room_frames``)."""
        key = _key(raw)
        self._raw[key] = raw
        self._denoised[key] = denoised
        if own_voice:
            self._own.add(key)
        if speaking:
            self._speaking.add(key)
        self._order.append(key)
        while len(self._order) > self._limit:
            old = self._order.popleft()
            self._raw.pop(old, None)
            self._denoised.pop(old, None)
            self._own.discard(old)
            self._speaking.discard(old)

    def own_voice(self, frame: AudioChunk) -> bool:
        """Whether ``frame`` held only the satellite's own voice (``add``)."""
        return _key(frame) in self._own

    def context(
        self, seconds: float, span_seconds: float, denoised: bool = False, warm: bool = True
    ) -> AudioChunk | None:
        """The context a search adapts to (its cepstral mean): ``before``, but only back to
        the last frame that held only what the echo canceller left of the satellite's own
        voice, and None when that leaves under ``MIN_CONTEXT_SECONDS`` (the search then
        starts from the live mean). Over a reply the audio before a command is what the
        canceller left of the reply, and a search that started from its mean made words
        of it ("i need help" heard as "lighting out bathroom"; bench/echo_words.py
        --loop). Not ``warm`` (the recognizer has searched nothing yet: its live mean is
        cold, and a first command over a reply came out empty from it) the whole span."""
        frames = self._denoised if denoised else self._raw
        span = [k for k in self._order if seconds - span_seconds <= k < seconds - 1e-6]
        keys = since_own_voice(span, [k in self._own for k in span]) if warm else span
        return join_frames([frames[k] for k in keys]) if keys else None

    def get(self, processed: AudioChunk, denoised: bool = False) -> AudioChunk:
        """The frame behind a processed one (the processed one itself if it is gone)."""
        frames = self._denoised if denoised else self._raw
        return frames.get(_key(processed), processed)

    def frames(self, start: float, end: float, denoised: bool = False) -> list[AudioChunk]:
        """The 10 ms frames that start from ``start`` and before ``end``, in order."""
        frames = self._denoised if denoised else self._raw
        return [frames[k] for k in self._order if start - 1e-6 <= k < end]

    def room_frames(self, start: float, end: float) -> list[AudioChunk]:
        """The raw frames from ``start`` to ``end`` heard while the satellite was not
        speaking: the room as it is (its own voice is no other voice in the room)."""
        return [
            self._raw[k] for k in self._order if start - 1e-6 <= k < end and k not in self._speaking
        ]

    def before(
        self, seconds: float, span_seconds: float, denoised: bool = False
    ) -> AudioChunk | None:
        """Audio from ``span_seconds`` before ``seconds`` up to it, or None."""
        frames = self._denoised if denoised else self._raw
        keys = [k for k in self._order if seconds - span_seconds <= k < seconds - 1e-6]
        if not keys:
            return None
        return join_frames([frames[k] for k in keys])


def snr_db(audio: bytes) -> float:
    """Speech-to-noise ratio of 16-bit mono audio, dB: its loudest 10 ms frames against
    its quietest ones. Needs some speech in it (a wake word, a first syllable)."""
    samples = np.frombuffer(audio, dtype="<i2").astype(np.float64)
    count = len(samples) // 160
    if count < 2 * _LOUDEST_FRAMES:
        return math.inf
    energy = np.sort(np.square(samples[: count * 160]).reshape(count, 160).mean(axis=1))
    noise = float(energy[: max(1, int(count * _QUIET_SHARE))].mean())
    speech = float(energy[-_LOUDEST_FRAMES:].mean())
    return 10.0 * math.log10(max(speech, 1.0) / max(noise, 1.0))


def hear_denoised(mode: str, ratio_db: float, below_db: float) -> bool:
    """Whether the recognizer should hear the denoised audio (``mode``: stt.hearing) in a
    room whose speech stands ``ratio_db`` over its noise (``snr_db``)."""
    if mode != "auto":
        return mode == "denoised"
    return ratio_db < below_db


def denoised_again(frames: list[AudioChunk], other_way: str) -> list[AudioChunk]:
    """``frames`` of the microphone denoised by ``other_way`` (stt.other_way: ``webrtcN``,
    WebRTC at level N, from a fresh start: lead it with some of the room before the
    speech, for it to learn the noise from)."""
    try:
        from webrtc_noise_gain import AudioProcessor  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("webrtc-noise-gain", None, "stt.other_way") from err
    processor = AudioProcessor(0, int(other_way.removeprefix("webrtc")))
    return [
        AudioChunk(f.rate_hz, f.width_bytes, f.channels, processor.Process10ms(f.samples).audio,
                   f.timestamp_seconds)
        for f in frames
    ]  # fmt: skip


def other_way_frames(
    mic: MicHistory,
    first_seconds: float,
    now_seconds: float,
    other_way: str,
    context_seconds: float,
) -> tuple[list[AudioChunk], AudioChunk | None] | None:
    """An utterance from ``first_seconds`` to ``now_seconds`` and the ``context_seconds``
    before it (0: none) denoised again from the raw microphone (``denoised_again``),
    which first hears ``SETTLE_SECONDS`` more of the room; None when the history no
    longer holds it all."""
    lead = context_seconds + SETTLE_SECONDS
    raw = mic.frames(first_seconds - lead, now_seconds + 1e-3)
    if not raw or raw[0].timestamp_seconds > first_seconds + 1e-3:
        return None
    heard = denoised_again(raw, other_way)
    first = first_seconds - 1e-6
    frames = [f for f in heard if f.timestamp_seconds >= first]
    spanned = [f for f in heard if first - context_seconds <= f.timestamp_seconds < first]
    before = since_own_voice(spanned, [mic.own_voice(f) for f in spanned])
    if not frames:
        return None
    return frames, (join_frames(before) if context_seconds and before else None)


def since_own_voice(frames: list[T], own: list[bool]) -> list[T]:
    """The 10 ms ``frames`` before a command (``own``: each held only the satellite's own
    voice) after the last of the satellite's own voice; none when that cut leaves under
    ``MIN_CONTEXT_SECONDS`` (see ``MicHistory.context``)."""
    for index in range(len(frames) - 1, -1, -1):
        if own[index]:
            after = frames[index + 1 :]
            return after if len(after) * 0.01 >= MIN_CONTEXT_SECONDS - 1e-6 else []
    return frames


def _key(frame: AudioChunk) -> float:
    return round(frame.timestamp_seconds, 4)
