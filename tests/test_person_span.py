"""The person's own words in an utterance heard among other voices
(frontend/person_span.py), the search of them alone (``stt.person_span_retry``), and a call
for help heard among other voices confirmed first (``stt.confirm_help_among_voices``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest

from satellite.actions import AnswerDue
from satellite.audio.chunk import AudioChunk
from satellite.config import Config, validate
from satellite.frontend.person_span import (
    LEAD_SECONDS,
    TAIL_SECONDS,
    other_voices,
    person_span,
)
from satellite.nlu import trust
from satellite.nlu.help_answers import ANSWER_NO
from satellite.nlu.recognizer import IntentResult
from satellite.stt.hearing import MicHistory
from satellite.understanding.dialogue import answer_to_help
from tests import corpus, robustness, synth


def _frames(audio: synth.Float, start: float = 0.0) -> list[AudioChunk]:
    frames = list(synth.mic_chunks(audio, seconds=0.01))
    return [
        AudioChunk.from_int16(f.to_int16(), timestamp_seconds=round(start + f.timestamp_seconds, 4))
        for f in frames
    ]


def _room(seconds: float, seed: int) -> synth.Float:
    """Other people talking, about 40 dB below full scale."""
    return corpus.people(int(seconds * synth.RATE), seed) * 300.0


def test_the_words_louder_than_the_room_are_found() -> None:
    said = synth.espeak("turn on the kitchen light", "en-us", 160)
    room = _room(1.5 + 0.8 + len(said) / synth.RATE + 1.0, seed=3)
    start = 1.5 + 0.8
    audio = room.copy()
    at = int(start * synth.RATE)
    audio[at : at + len(said)] += said * (10.0 ** (20.0 / 20.0) * 300.0 / np.std(said))
    frames = _frames(audio)
    before = [f for f in frames if f.timestamp_seconds < 1.5]
    utterance = [f for f in frames if f.timestamp_seconds >= 1.5]
    span = person_span(before, utterance)
    assert span is not None
    end = start + len(said) / synth.RATE
    # the span holds the command, with little of the room around it
    assert start - LEAD_SECONDS - 0.15 <= span.start <= start + 0.05
    assert end - 0.1 <= span.end <= end + TAIL_SECONDS + 0.1
    assert span.contrast_db >= 12.0


@pytest.mark.parametrize(("below_db", "voices"), [(10.0, True), (40.0, False)])
def test_other_voices_count_when_near_the_persons_level(below_db: float, voices: bool) -> None:
    """People talking 10 dB below the person's speech (its level against the room's
    whole; their pauses put the floor further down) fill the room; 40 dB below (another
    room, a radio far off) they do not."""
    said = synth.espeak("call the nurse", "en-us", 160)
    room = _room(3.0 + len(said) / synth.RATE + 0.7, seed=5)
    audio = room.copy()
    at = int(3.0 * synth.RATE)
    gain = 10.0 ** (below_db / 20.0) * np.std(room) / np.std(said)
    audio[at : at + len(said)] += said * gain
    frames = _frames(audio)
    assert other_voices(frames[:300], frames[300:]) is voices


def test_no_other_voices_in_a_quiet_or_steady_room() -> None:
    """A quiet room's hiss and white noise 5 dB under the speech are steady: no voices."""
    said = synth.espeak("call the nurse", "en-us", 160)
    for level, below_db in ((15.0, 50.0), (3000.0, 5.0)):
        noise = synth.white_noise(3.0 + len(said) / synth.RATE + 0.7, level, seed=2)
        audio = noise.copy()
        at = int(3.0 * synth.RATE)
        audio[at : at + len(said)] += said * (level * 10 ** (below_db / 20) / np.std(said))
        frames = _frames(audio)
        assert not other_voices(frames[:300], frames[300:]), level
    assert not other_voices(frames[:300], [])


@pytest.mark.parametrize("voice", ["en-us", "kal_diphone", "awb"])
def test_pink_noise_near_the_speech_holds_no_voices(voice: str) -> None:
    """Pink noise 20 dB under "okay nabu, call the nurse": its level over the whole band
    wandered as much as other voices' (its low notes come and go) and these scenes were
    judged to hold voices; in the speech band it is steady. People talking there are
    voices still."""
    for kind, voices in (("pink", False), ("people", True)):
        scene = robustness.scene(
            corpus.installed(voice), "call the nurse", corpus.Room(kind, 20.0), 2
        )
        frames = _frames(np.asarray(scene.audio, np.float64))
        first = scene.command_start // 160 - 30
        room, utterance = (
            frames[max(0, first - 300) : first],
            frames[first : scene.command_end // 160 + 70],
        )
        assert other_voices(room, utterance) is voices, kind


def test_a_steady_loud_room_gives_no_span() -> None:
    """White noise 5 dB under the speech: the speech does not stand out enough to tell."""
    said = synth.espeak("turn on the kitchen light", "en-us", 160)
    total = int(3.5 * synth.RATE) + len(said)
    noise = synth.white_noise(total / synth.RATE, 3000.0, seed=2)
    audio = noise.copy()
    at = int(1.5 * synth.RATE)
    audio[at : at + len(said)] += said * (3000.0 * 10 ** (5 / 20) / np.std(said))
    frames = _frames(audio)
    assert person_span(frames[:150], frames[150:]) is None


@pytest.mark.parametrize("lead", [0.05, 0.1])
def test_no_span_when_the_words_fill_the_utterance(lead: float) -> None:
    """An utterance that is the person's words alone leaves nothing to cut."""
    said = synth.espeak("what time is it", "en-us", 160) * 3.0
    quiet = synth.white_noise(1.5, 15.0, seed=1)
    utterance = np.concatenate([synth.silence(lead), said, synth.silence(lead)])
    utterance = utterance + synth.white_noise(len(utterance) / synth.RATE, 15.0, seed=4)
    room = _frames(quiet)
    assert person_span(room, _frames(utterance, start=1.5)) is None


def test_empty_utterance() -> None:
    assert person_span([], []) is None


def _with_retry(retry: bool) -> Config:
    config = Config()
    return dataclasses.replace(config, stt=dataclasses.replace(config.stt, person_span_retry=retry))


def _first_hearings(
    scene: robustness.Scene, configured: Callable[[bool], Config]
) -> dict[bool, AnswerDue]:
    """How the satellite first answers ``scene`` with ``configured(False)`` and with
    ``configured(True)`` (the wake word must be heard, and something)."""
    firsts = {}
    for on in (False, True):
        config = configured(on)
        heard = robustness.replay(config, scene.audio, False, robustness.listener(config))
        assert heard.wakes, "the wake word was not heard"
        assert heard.first is not None
        firsts[on] = heard.first
    return firsts


def test_a_command_among_people_talking_is_heard_from_its_own_words() -> None:
    """Festival's ked, "okay nabu, turn on the lights in the kitchen" with people talking
    20 dB below: heard whole, the room's voices around it make it "could you turn all the
    lights in the kitchen red", not believed; its own words alone are heard right, and
    asked about once more (another voice is still under them), not acted on at once."""
    voice = corpus.installed("ked_diphone")
    scene = robustness.scene(
        voice, "turn on the lights in the kitchen", corpus.Room("people", 20.0), 4
    )
    outcomes = _first_hearings(scene, _with_retry)
    assert outcomes[False].result.intent is None
    right = outcomes[True]
    assert right.result.intent == "HassTurnOn"
    assert right.result.slots.get("area") == "kitchen"
    assert right.doubtful  # asked about, not acted on at once


def test_no_search_of_a_span_in_a_quiet_room() -> None:
    """Out-of-domain speech in a quiet room is not searched again over its words: the room
    is steady, so it is judged by the whole utterance as before."""
    config = Config()
    understanding = robustness.listener(config)
    voice = corpus.installed("slt")
    scene = robustness.scene(
        voice, "the weather was lovely at the seaside", corpus.Room("clean"), 2
    )
    understanding.reports.clear()
    robustness.replay(config, scene.audio, False, understanding)
    reports = list(understanding.reports.values())
    assert reports, "nothing was heard"
    # not believed whole (so the search would have been asked for), and not searched
    assert all(report.intent is not None and report.intent.intent is None for report in reports)
    assert all(report.person_span is None for report in reports)


def test_among_other_voices_every_result_is_asked_about_and_a_call_for_help_still() -> None:
    """Among other voices a sure command and a sure call for help are asked about once
    more ("Do you need help?" for the call); with ``ask_again_among_voices`` off only the
    call; with ``confirm_help_among_voices`` off too, neither. A quiet room: neither."""
    settings = Config().stt
    call = IntentResult("CallForHelp", {}, 0.99)
    command = IntentResult("HassTurnOn", {"name": "kitchen light"}, 0.99)
    assert not trust.doubtful(call, False, settings)
    assert not trust.doubtful(command, False, settings)
    assert trust.doubtful(call, False, settings, voices=True)
    assert trust.doubtful(command, False, settings, voices=True)
    calls_only = validate({"stt": {"ask_again_among_voices": False}}).stt
    assert trust.doubtful(call, False, calls_only, voices=True)
    assert not trust.doubtful(command, False, calls_only, voices=True)
    off = _among_voices(False).stt
    assert not trust.doubtful(call, False, off, voices=True)
    assert not trust.doubtful(command, False, off, voices=True)
    # a "no" to "Do you need help?" heard among other voices does not drop the call
    no = IntentResult(ANSWER_NO, {}, 0.99)
    assert answer_to_help(no, trust.doubtful(no, False, settings)) == "no"
    assert answer_to_help(no, trust.doubtful(no, False, settings, voices=True)) == "unclear"


def _among_voices(ask: bool) -> Config:
    """The default configuration, asking again among other voices (``ask``) or not at all,
    and not asking for a noisy room's two hearings to agree (tests/test_noisy_room.py),
    which caught flite ``awb``'s "switch each light out" by itself: the voices' rule alone."""
    config = Config()
    stt = dataclasses.replace(
        config.stt, ask_again_among_voices=ask, confirm_help_among_voices=ask, agree_below_db=0.0
    )
    return dataclasses.replace(config, stt=stt)


@pytest.mark.parametrize(
    ("voice_name", "said", "seed"),
    [("slt", "i need help", 12), ("awb", "speak louder", 18)],
)
def test_among_other_voices_what_was_acted_on_at_once_is_asked_about(
    voice_name: str, said: str, seed: int
) -> None:
    """flite's slt, "okay nabu, i need help" with people talking 20 dB below, heard as a
    call 0.94 sure; flite's awb, "speak louder" with a television 20 dB below, heard as
    "switch each light out", 0.91 sure: both were acted on at once; now both are asked
    about (the call: "Do you need help?", which sends it on a yes, or unconfirmed on no
    answer; never dropped)."""
    room = corpus.Room("people" if said == "i need help" else "tv", 20.0)
    scene = robustness.scene(corpus.installed(voice_name), said, room, seed)
    firsts = _first_hearings(scene, _among_voices)
    assert firsts[False].result.intent is not None and not firsts[False].doubtful
    assert firsts[True].result.intent == firsts[False].result.intent
    assert firsts[True].doubtful


def test_the_room_before_an_utterance_leaves_out_the_satellites_own_voice() -> None:
    """Frames heard while the satellite spoke are no room of other voices: the room an
    utterance is judged against leaves them out (``MicHistory.room_frames``), and the
    history forgets them as it forgets the frames."""
    mic = MicHistory(seconds=1.0)
    for index in range(150):
        frame = AudioChunk.from_int16(
            np.full(160, index, dtype=np.int16), timestamp_seconds=index / 100
        )
        mic.add(frame, frame, speaking=40 <= index < 90)
    room = mic.room_frames(0.5, 1.5)
    assert [round(f.timestamp_seconds * 100) for f in room] == list(range(90, 150))
    assert len(mic.frames(0.5, 1.5)) == 100  # every frame is still heard
