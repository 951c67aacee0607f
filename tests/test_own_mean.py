"""An utterance the streaming search did not trust is searched again, whole, normalised
by its own cepstral mean (``stt.own_mean_retry``).

The recognizer's ``search_own_mean`` is checked on real speech heard cold (no speech
before it: pocketsphinx's initial mean, as the first utterance of a recording; that it
leaves a paused search as it was, in tests/test_second_hearing.py); the
rule in Understanding with a recognizer whose two searches are chosen;
tests/test_understanding.py checks it over the command set heard with no wake word.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pytest

from satellite.audio.chunk import AudioChunk, join_frames
from satellite.config import Config
from satellite.stt.base import SttResult
from satellite.stt.searches_again import OWN_MEAN_MAX_SECONDS
from satellite.understanding import Understanding
from tests.fake_recognizer import Heard, decide, stage, understanding_with
from tests.understand import sphinx_recognizer, spoken

#: Per frame against the phone loop: below every need (rejected) / far above it.
POOR = -45.0
GOOD = -5.0


@pytest.mark.usefixtures("need_espeak")
def test_a_command_heard_cold_comes_out_from_its_own_mean() -> None:
    right = 0
    for text in ("turn on the living room light", "never mind"):
        for voice in ("en-us", "en-gb-x-rp", "en-us+m3"):
            recognizer = sphinx_recognizer()  # new decoders: the initial mean, as heard cold
            frames = spoken(text, voice)
            recognizer.start(frames[0].timestamp_seconds)
            for frame in frames:
                recognizer.process(frame)
            cold = recognizer.finish()
            own = recognizer.search_own_mean(frames)
            assert own.score_per_frame is not None and cold.score_per_frame is not None
            assert own.score_per_frame > cold.score_per_frame, (text, voice)
            assert [w.word for w in own.words] == own.text.split()
            assert frames[0].timestamp_seconds <= own.words[0].start_seconds
            right += own.text == text
    # measured: heard cold, 1 of 6 right; from their own mean, 5 of 6
    assert right >= 5


@pytest.mark.usefixtures("need_espeak")
def test_searched_again_a_command_scores_as_if_streamed_from_that_mean() -> None:
    """The search aside (default beams) is held to the streaming search's needs, so its
    score must be the one a streaming search (wide beams) from the same mean gives: the
    grammar search scores every senone as the phone loop does (scoring only its own
    active ones, it came out 15-25 per frame higher)."""
    recognizer = sphinx_recognizer()
    for text, voice in (("turn off the bedroom lamp", "en-us"), ("what time is it", "en-us+m3")):
        frames = spoken(text, voice)
        recognizer.start(frames[0].timestamp_seconds, join_frames(frames))
        for frame in frames:
            recognizer.process(frame)
        streamed = recognizer.finish()
        again = recognizer.search_own_mean(frames)
        assert again.text == streamed.text == text
        assert again.score_per_frame is not None and streamed.score_per_frame is not None
        assert again.score_per_frame == pytest.approx(streamed.score_per_frame, abs=0.5)


class _Again(Heard):
    """Heard ``text`` at ``score`` streaming, and ``again`` at ``again_score`` when
    searched again from its own mean."""

    def __init__(self, text: str, score: float, again: str, again_score: float) -> None:
        super().__init__(text, score)
        self.again = SttResult(again, 0.5, (), bool(again), again_score)
        #: Per search again: how many frames, and whether they were the raw ones.
        self.searched: list[tuple[int, bool]] = []

    def search_own_mean(self, frames: Sequence[AudioChunk]) -> SttResult:
        speech = np.frombuffer(frames[len(frames) // 2].samples, np.int16)
        self.searched.append((len(frames), bool(speech[0] > 0)))
        return self.again


def _decide(
    recognizer: _Again, retry: bool = True, first_seconds: float = 0.0, loud: bool = False
) -> tuple[str | None, Understanding]:
    config = Config()
    config = dataclasses.replace(config, stt=dataclasses.replace(config.stt, own_mean_retry=retry))
    understanding = understanding_with(recognizer, config)
    stage(understanding, first_seconds, loud=loud, denoised=loud)  # a loud room: denoised
    transcript, intent = decide(understanding, 1.2, 1.5)
    assert transcript.in_grammar is (intent.intent is not None)
    return intent.intent, understanding


def test_a_rejected_command_is_searched_again_from_its_own_mean() -> None:
    recognizer = _Again("turn on the heater", POOR, "what time is it", GOOD)
    done, understanding = _decide(recognizer)
    assert done == "GetTime"
    # the utterance as it was heard (raw), to 0.3 s after the speech
    assert recognizer.searched == [(150, True)]
    (report,) = understanding.reports.values()
    assert report.own_mean is not None and report.own_mean.text == "what time is it"
    assert report.stt is not None and report.stt.text == "what time is it"
    assert "own_mean_search" in report.timings_ms


def test_a_search_from_its_own_mean_needs_more_score() -> None:
    need = Config().stt.rejection_threshold + Config().stt.own_mean_shift
    for score, done in ((need - 0.5, None), (need + 0.5, "GetTime")):
        found, _ = _decide(_Again("what time is it", POOR, "what time is it", score))
        assert found == done


@pytest.mark.parametrize(
    ("recognizer", "retry", "first_seconds", "loud", "done"),
    [
        # the streaming search was trusted
        (_Again("what time is it", GOOD, "help me", GOOD), True, 0.0, False, "GetTime"),
        # switched off
        (_Again("what time is it", POOR, "what time is it", GOOD), False, 0.0, False, None),
        # longer than a search in the frame loop may take (and than the history)
        (_Again("what time is it", POOR, "what time is it", GOOD), True, -5.0, False, None),
        # a loud room
        (_Again("what time is it", POOR, "what time is it", GOOD), True, 0.0, True, None),
    ],
    ids=["trusted", "off", "too-long", "loud"],
)
def test_when_an_utterance_is_not_searched_again(
    recognizer: _Again, retry: bool, first_seconds: float, loud: bool, done: str | None
) -> None:
    assert first_seconds == 0.0 or 1.5 - first_seconds > OWN_MEAN_MAX_SECONDS
    found, understanding = _decide(recognizer, retry, first_seconds, loud)
    assert found == done
    assert recognizer.searched == []
    (report,) = understanding.reports.values()
    assert report.own_mean is None


def test_a_result_is_searched_again_once_per_utterance() -> None:
    """A result judged at the pause that ended the utterance comes again at its end: it
    is not searched again then."""
    recognizer = _Again("turn on the heater", POOR, "what time is it", GOOD)
    understanding = understanding_with(recognizer)
    stage(understanding)
    believed = understanding.belief.believe(recognizer.result, 1.5)
    assert believed.trusted and believed.stt.text == "what time is it"
    assert understanding.belief.believe(recognizer.result, 1.5) == believed
    assert len(recognizer.searched) == 1
    understanding.belief.begin()  # the next utterance
    assert understanding.belief.believe(recognizer.result, 1.5) == believed
    assert len(recognizer.searched) == 2
