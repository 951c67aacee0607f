"""The TTS thread with the real eSpeak NG engine and the player: order, stop, bounds, sounds."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from satellite.audio.chunk import FRAME_BYTES, AudioChunk, to_pipeline_format
from satellite.audio.events import PlaybackFinished, PlaybackStarted, PlaybackStopped
from satellite.audio.player import Player
from satellite.audio.settings import PlayerSettings
from satellite.audio.wav import read_wav
from satellite.errors import AudioFormatError
from satellite.events import Event
from satellite.frontend.vad import make_vad
from satellite.tts.base import TtsError, UnknownVoiceError
from satellite.tts.espeak import EspeakEngine
from satellite.tts.feedback import SOUNDS, bundled_sound_path, load_feedback_sounds
from satellite.tts.settings import FeedbackSettings
from satellite.tts.speaker import MAX_QUEUED_REPLIES, Speaker
from scripts import make_sounds

WAIT_SECONDS = 20.0
THREE_SENTENCES = (
    "Good morning. It is seven o'clock and the sun is shining. Breakfast is served at eight."
)


class Log:
    """One ordered record of what the engine and the player were asked to do."""

    def __init__(self) -> None:
        self.entries: list[str] = []
        self.lock = threading.Lock()

    def add(self, entry: str) -> None:
        with self.lock:
            self.entries.append(entry)


class LoggingEngine:
    """The real eSpeak NG engine, logging when each piece starts and ends."""

    name = "logging"

    def __init__(self, log: Log, **kwargs: int) -> None:
        self.inner = EspeakEngine(**kwargs)  # type: ignore[arg-type]
        self.log = log
        self.closed_early = 0

    def synthesize(self, text: str, voice: str | None = None) -> Iterator[AudioChunk]:
        self.log.add(f"synth {text}")
        finished = False
        try:
            for chunk in self.inner.synthesize(text, voice):
                self.log.add("chunk")
                yield chunk
            finished = True
        finally:
            if not finished:
                self.closed_early += 1
            self.log.add(f"done {text}")

    def voices(self) -> list[str]:
        return self.inner.voices()

    def close(self) -> None:
        pass


class LoggingPlayer(Player):
    def __init__(self, log: Log, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.log = log

    def write(self, chunk: AudioChunk) -> bool:
        self.log.add("player")
        return super().write(chunk)


class HoldingSink:
    """Counts audio; once ``hold_seconds`` arrived, holds the writer until released."""

    def __init__(self, hold_seconds: float | None = None) -> None:
        self.frames = 0
        self.hold_frames = None if hold_seconds is None else int(hold_seconds * 22050)
        self.reached = threading.Event()
        self.release = threading.Event()

    def write(self, chunk: AudioChunk) -> None:
        self.frames += chunk.num_frames
        if self.hold_frames is not None and self.frames >= self.hold_frames:
            self.reached.set()
            assert self.release.wait(WAIT_SECONDS)

    def close(self) -> None:
        pass


def _speaker(
    log: Log,
    sink: HoldingSink,
    events: list[Event] | None = None,
    rate_wpm: int = 160,
    **player: int,
) -> tuple[Speaker, LoggingEngine, Player]:
    engine = LoggingEngine(log, rate_wpm=rate_wpm)
    settings = PlayerSettings(**player)
    out = LoggingPlayer(log, sink, settings, on_event=events.append if events is not None else None)
    return Speaker(engine, out), engine, out


def test_first_chunk_goes_to_the_player_before_the_last_sentence_is_synthesised() -> None:
    log = Log()
    speaker, _, player = _speaker(log, HoldingSink())
    reply = speaker.say(THREE_SENTENCES)
    assert reply.wait(WAIT_SECONDS)
    assert player.wait(WAIT_SECONDS)
    assert reply.pieces == [
        "Good morning.",
        "It is seven o'clock and the sun is shining.",
        "Breakfast is served at eight.",
    ]
    entries = log.entries
    assert entries.count("player") > 10  # several chunks, not one block
    first_out = entries.index("player")
    assert first_out < entries.index("synth Breakfast is served at eight.")
    assert first_out < entries.index("done Good morning.")  # even before piece 1 ended
    speaker.close()


def test_text_streamed_in_is_spoken_before_it_has_all_arrived() -> None:
    log = Log()
    sink = HoldingSink()
    speaker, _, player = _speaker(log, sink)
    heard_before_the_rest = threading.Event()

    def tokens() -> Iterator[str]:
        yield from ["The ", "doctor ", "is ", "on ", "the ", "way. "]
        # an LLM still thinking: the first sentence must be audible meanwhile
        for _ in range(int(WAIT_SECONDS / 0.01)):
            if sink.frames > 0:
                heard_before_the_rest.set()
                break
            threading.Event().wait(0.01)
        yield from ["Please ", "stay ", "seated."]

    reply = speaker.say(tokens())
    assert reply.wait(WAIT_SECONDS)
    assert heard_before_the_rest.is_set()
    assert reply.pieces == ["The doctor is on the way.", "Please stay seated."]
    assert player.wait(WAIT_SECONDS)
    speaker.close()


def test_stop_mid_reply_cancels_synthesis_and_playback() -> None:
    log = Log()
    events: list[Event] = []
    sink = HoldingSink(hold_seconds=1.0)
    speaker, engine, player = _speaker(log, sink, events, max_buffer_ms=2000)
    text = " ".join(f"This is sentence number {n} of a very long story." for n in range(40))
    reply = speaker.say(text)
    queued = speaker.say("And this reply was waiting.")
    assert sink.reached.wait(WAIT_SECONDS)
    stopper = threading.Thread(target=speaker.stop)
    stopper.start()
    assert reply.wait(WAIT_SECONDS)
    sink.release.set()
    stopper.join(WAIT_SECONDS)
    assert player.wait(WAIT_SECONDS)
    assert reply.cancelled
    assert queued.cancelled
    assert queued.pieces == []
    assert len(reply.pieces) < 40
    assert engine.closed_early == 1
    assert [type(e) for e in events] == [PlaybackStarted, PlaybackStopped]
    stopped = events[-1]
    assert isinstance(stopped, PlaybackStopped)
    assert stopped.played_seconds < 1.2
    assert speaker.say("Still here.").wait(WAIT_SECONDS)  # speaks again after a stop
    speaker.close()


def test_ten_thousand_characters_play_with_bounded_memory() -> None:
    log = Log()
    sink = HoldingSink()
    speaker, _, player = _speaker(log, sink, rate_wpm=450, max_buffer_ms=500, rate_hz=22050)
    words = " ".join(["ok"] * 3333)  # 9,998 characters, no punctuation at all
    reply = speaker.say(words)
    assert reply.wait(60.0)
    assert player.wait(WAIT_SECONDS)
    assert len(reply.pieces) >= 30
    assert max(len(p) for p in reply.pieces) <= 300
    assert player.max_buffered_seconds <= 0.5
    assert sink.frames / 22050 > 3333 / 450 * 60 * 0.5  # every word was spoken
    speaker.close()


def test_errors_reach_the_caller_and_the_speaker_goes_on() -> None:
    log = Log()
    events: list[Event] = []
    speaker, _, player = _speaker(log, HoldingSink(), events)
    speaker.voice = "zz-none"
    bad = speaker.say("Hello.")
    with pytest.raises(UnknownVoiceError):
        bad.wait(WAIT_SECONDS)
    speaker.voice = None
    assert speaker.say("Hello.").wait(WAIT_SECONDS)
    assert speaker.say("").wait(WAIT_SECONDS)
    assert player.wait(WAIT_SECONDS)
    endings = [e for e in events if not isinstance(e, PlaybackStarted)]
    assert [type(e) for e in endings] == [PlaybackFinished] * 3
    assert [getattr(e, "duration_seconds", None) for e in endings][::2] == [0.0, 0.0]
    speaker.close()


def test_a_feedback_sound_plays_in_order_with_speech() -> None:
    log = Log()
    events: list[Event] = []
    speaker, _, player = _speaker(log, HoldingSink(), events)
    sounds = load_feedback_sounds(FeedbackSettings())
    speaker.say("Done.", reply_id="speech")
    assert speaker.play_sound(sounds["done"], reply_id="chime").wait(WAIT_SECONDS)
    assert player.wait(WAIT_SECONDS)
    order = [(type(e).__name__, getattr(e, "reply_id", "")) for e in events]
    assert order == [
        ("PlaybackStarted", "speech"),
        ("PlaybackFinished", "speech"),
        ("PlaybackStarted", "chime"),
        ("PlaybackFinished", "chime"),
    ]
    speaker.close()


def test_feedback_sounds_bundled_configured_or_off(tmp_path: Path) -> None:
    bundled = load_feedback_sounds(FeedbackSettings())
    assert sorted(bundled) == sorted(SOUNDS)
    assert all(0.1 < s.seconds < 0.5 for s in bundled.values())
    assert load_feedback_sounds(FeedbackSettings(enabled=False)) == {}
    custom = load_feedback_sounds(FeedbackSettings(done=str(bundled_sound_path("error"))))
    assert custom["done"].samples == bundled["error"].samples
    with pytest.raises(AudioFormatError, match="no such WAV file"):
        load_feedback_sounds(FeedbackSettings(awake=str(tmp_path / "missing.wav")))


def test_the_bundled_sounds_are_what_the_script_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(make_sounds, "DATA", tmp_path)
    make_sounds.main()
    for name in SOUNDS:
        assert (
            read_wav(tmp_path / f"{name}.wav").samples == read_wav(bundled_sound_path(name)).samples
        )


def test_a_full_queue_refuses_a_reply_without_blocking() -> None:
    log = Log()
    sink = HoldingSink(hold_seconds=0.1)
    speaker, _, player = _speaker(log, sink)
    speaker.say("This reply is being spoken while the output is busy.")
    assert sink.reached.wait(WAIT_SECONDS)  # the TTS thread holds the first reply
    waiting = [speaker.say(f"Reply {n}.") for n in range(MAX_QUEUED_REPLIES)]
    refused = speaker.say("One too many.")
    assert refused.done
    with pytest.raises(TtsError, match="already waiting"):
        refused.wait(0)
    assert not any(r.done for r in waiting)
    stopper = threading.Thread(target=speaker.stop)
    stopper.start()
    sink.release.set()
    stopper.join(WAIT_SECONDS)
    assert all(r.wait(WAIT_SECONDS) and r.cancelled for r in waiting)
    assert player.wait(WAIT_SECONDS)
    speaker.close()


@pytest.mark.parametrize("name", ["awake", "done"])
def test_the_sounds_played_while_someone_may_speak_are_not_speech_to_the_vad(name: str) -> None:
    """'done' acknowledges a request while the follow-on window is open (and 'awake' would
    sound as the person begins): heard back by the microphone, neither may start an
    utterance."""
    sound = to_pipeline_format(read_wav(bundled_sound_path(name)))
    silence = bytes(FRAME_BYTES * 30)
    audio = silence + sound.samples + silence
    for engine in ("silero", "micro"):
        vad = make_vad(engine)
        highest = max(
            vad.process(AudioChunk(16000, 2, 1, audio[i : i + FRAME_BYTES], i / 32000))
            for i in range(0, len(audio) - FRAME_BYTES + 1, FRAME_BYTES)
        )
        assert highest < 0.2, (engine, highest)  # the VAD's threshold is 0.5
