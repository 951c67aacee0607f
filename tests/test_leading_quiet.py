"""A reply's leading quiet is cut before the player: the real eSpeak NG engine, the real
player and speaker; pauses inside a reply, and the player's lead-in, are kept."""

from __future__ import annotations

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk
from satellite.audio.player import Player
from satellite.audio.settings import PlayerSettings
from satellite.tts.espeak import EspeakEngine
from satellite.tts.leading_quiet import KEEP_SECONDS, MOST_SECONDS, QUIET_LEVEL, LeadingQuiet
from satellite.tts.speaker import Speaker

RATE = 22050
LEAD_IN_MS = 30
WAIT_SECONDS = 20.0


class KeepingSink:
    """Keeps every sample it is given."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, chunk: AudioChunk) -> None:
        assert (chunk.rate_hz, chunk.width_bytes, chunk.channels) == (RATE, 2, 1)
        self.data += chunk.samples

    def close(self) -> None:
        pass

    def samples(self) -> np.ndarray:
        return np.frombuffer(bytes(self.data), dtype="<i2")


def _first_sound(samples: np.ndarray) -> float:
    """Where the first sample over the quiet level is, s."""
    return float(np.flatnonzero(np.abs(samples.astype(np.int32)) > QUIET_LEVEL)[0]) / RATE


def _spoken(engine: EspeakEngine, text: str) -> np.ndarray:
    """What the speaker and the player send to the output for ``text``."""
    sink = KeepingSink()
    player = Player(sink, PlayerSettings(rate_hz=RATE, lead_in_ms=LEAD_IN_MS))
    speaker = Speaker(engine, player)
    reply = speaker.say(text)
    assert reply.wait(WAIT_SECONDS)
    assert player.wait(WAIT_SECONDS)
    speaker.close()
    player.close()
    return sink.samples()


@pytest.fixture(scope="module")
def engine() -> EspeakEngine:
    return EspeakEngine()


def _synthesized(engine: EspeakEngine, text: str) -> np.ndarray:
    chunks = list(engine.synthesize(text))
    assert {c.rate_hz for c in chunks} == {RATE}
    return np.frombuffer(b"".join(c.samples for c in chunks), dtype="<i2")


@pytest.mark.parametrize("text", ["Turned on the kitchen light.", "Today is Tuesday."])
def test_a_reply_sounds_right_after_the_lead_in(engine: EspeakEngine, text: str) -> None:
    raw = _synthesized(engine, text)
    assert _first_sound(raw) > 0.03  # eSpeak starts these with dead air
    played = _spoken(engine, text)
    lead_in = RATE * LEAD_IN_MS // 1000  # samples, as the player counts them
    assert not played[:lead_in].any()  # the player's lead-in is still there
    assert _first_sound(played) == pytest.approx(lead_in / RATE + KEEP_SECONDS, abs=1.5 / RATE)
    # nothing else changed: from its first sound on, the reply is the engine's audio
    # (eSpeak NG's voicing jitters a little from one synthesis to the next)
    onset = round(_first_sound(raw) * RATE) - round(KEEP_SECONDS * RATE)
    after, expected = played[lead_in:].astype(np.float64), raw[onset:].astype(np.float64)
    assert len(after) == len(expected)
    assert np.sqrt(np.mean((after - expected) ** 2)) < 0.3 * np.sqrt(np.mean(expected**2))


def test_the_pause_between_sentences_is_kept(engine: EspeakEngine) -> None:
    text = "Turned on the light. Timer started."
    second = _synthesized(engine, "Timer started.")
    played = _spoken(engine, text)
    assert _first_sound(second) > 0.03
    quiet = np.abs(played.astype(np.int32)) <= QUIET_LEVEL
    runs = np.diff(np.flatnonzero(~quiet))
    # the second sentence's own dead air is still in the reply, after the first one
    assert runs.max() / RATE >= _first_sound(second)


def _chunk(samples: list[int] | np.ndarray, channels: int = 1, width: int = 2) -> AudioChunk:
    data = np.asarray(samples, dtype="<i2").tobytes()
    return AudioChunk(16000, width, channels, data)


def test_quiet_spread_over_chunks_is_dropped_and_the_onset_kept() -> None:
    keep = round(KEEP_SECONDS * 16000)
    cut = LeadingQuiet()
    assert cut.cut(_chunk([0] * 160)) is None
    assert cut.cut(_chunk([3, -5] * 80)) is None  # under the quiet level
    onset = [0] * 100 + [900, -900, 40]
    out = cut.cut(_chunk(onset))
    assert out is not None
    assert np.frombuffer(out.samples, "<i2").tolist() == onset[100 - keep :]
    assert cut.dropped_seconds == pytest.approx((320 + 100 - keep) / 16000)
    later = _chunk([0] * 50)
    assert cut.cut(later) is later  # after the first sound nothing is cut


def test_no_more_than_the_most_is_dropped() -> None:
    cut = LeadingQuiet()
    most = round(MOST_SECONDS * 16000)
    silence = np.zeros(most + 400, dtype=np.int16)
    out = cut.cut(_chunk(silence))
    assert out is not None
    assert len(out.samples) // 2 == 400
    assert cut.dropped_seconds == pytest.approx(MOST_SECONDS)


def test_stereo_is_cut_on_whole_frames_and_other_widths_pass() -> None:
    cut = LeadingQuiet()
    frames = [0, 0] * 200 + [0, 700] + [5, 5] * 10
    out = cut.cut(_chunk(frames, channels=2))
    assert out is not None
    keep = round(KEEP_SECONDS * 16000)
    assert np.frombuffer(out.samples, "<i2").tolist() == frames[2 * (200 - keep) :]
    wide = AudioChunk(16000, 4, 1, bytes(400))
    assert LeadingQuiet().cut(wide) is wide
