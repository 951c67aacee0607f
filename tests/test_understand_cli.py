"""The ``pocket-satellite understand`` command end to end, as a user runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from satellite.audio.wav import write_wav
from satellite.config import Config
from tests import synth
from tests.cli_support import run_command

pytestmark = pytest.mark.usefixtures("need_espeak")


def _understand(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    return run_command("understand", *args, timeout=300.0)


def test_one_json_object_per_utterance_with_words_intent_and_timings(tmp_path: Path) -> None:
    first = synth.espeak("turn on the kitchen light", "en-us", 160)
    second = synth.espeak("what time is it", "en-gb-x-rp", 160)
    audio = np.concatenate(
        [synth.silence(0.8), first, synth.silence(1.5), second, synth.silence(1.2)]
    )
    audio = audio + synth.white_noise(len(audio) / synth.RATE, 15.0, seed=3)
    path = tmp_path / "two.wav"
    write_wav(path, synth.to_chunk(audio))
    spans = [(0.8, 0.8 + len(first) / synth.RATE)]
    spans.append((spans[0][1] + 1.5, spans[0][1] + 1.5 + len(second) / synth.RATE))

    code, out, err = _understand("--input", str(path), "--no-llm")

    assert code == 0, err
    assert [o["intent"] for o in out] == ["HassTurnOn", "GetTime"]
    assert out[0]["slots"] == {"name": "kitchen light"}
    assert [o["source"] for o in out] == ["template", "template"]
    for obj, (start, end), text in zip(
        out, spans, ["turn on the kitchen light", "what time is it"], strict=True
    ):
        assert obj["transcript"] == text and obj["in_grammar"]
        assert [w["word"] for w in obj["words"]] == text.split()
        for word in obj["words"]:  # each word inside the speech, with its fit
            assert start - 0.15 <= word["start_seconds"] < word["end_seconds"] <= end + 0.15
            assert isinstance(word["score"], float)
        assert 0.5 < obj["confidence"] <= 1.0
        assert obj["score_per_frame"] > Config().stt.rejection_threshold
        assert {"stt_finish", "nlu"} <= set(obj["timings_ms"])
        assert obj["heard_other_way"] is None  # a quiet room: heard once


def test_a_recording_that_ends_while_someone_is_speaking_is_understood(tmp_path: Path) -> None:
    """No silence after the command (a clip cut tight): the file ends mid-utterance and
    the utterance ends with it, instead of being lost waiting for a silence."""
    speech = synth.espeak("what time is it", "en-us", 160)
    audio = np.concatenate([synth.silence(0.6), speech])
    audio = audio + synth.white_noise(len(audio) / synth.RATE, 15.0, seed=5)
    path = tmp_path / "tight.wav"
    write_wav(path, synth.to_chunk(audio))

    code, out, err = _understand("--input", str(path), "--no-llm")

    assert code == 0, err
    assert [o["end_reason"] for o in out] == ["end_of_input"]
    assert out[0]["intent"] == "GetTime"
    assert out[0]["end_seconds"] <= len(audio) / synth.RATE


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    code, out, err = _understand("--input", str(tmp_path / "nothing.wav"), "--no-llm")
    assert code != 0 and out == []
    assert "nothing.wav" in err
    assert "Traceback" not in err
