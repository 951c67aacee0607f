"""The TTS and player settings validate like every other section of the configuration."""

from __future__ import annotations

from typing import Any

import pytest
import voluptuous as vol

from satellite.audio.settings import PlayerSettings
from satellite.tts.settings import FeedbackSettings, TtsSettings


def _tts(data: dict[str, Any]) -> TtsSettings:
    return TtsSettings.from_validated(vol.Schema(TtsSettings.schema())(data))


def test_defaults() -> None:
    tts = _tts({})
    assert tts == TtsSettings()
    assert (tts.engine, tts.resolved_voice, tts.rate_wpm, tts.volume) == (
        "espeak",
        "en-us+klatt3",
        160,
        100,
    )
    assert tts.feedback == FeedbackSettings()
    assert TtsSettings(engine="pocket").resolved_voice == "alba"
    assert TtsSettings(engine="piper").resolved_voice is None
    player = PlayerSettings.from_validated(vol.Schema(PlayerSettings.schema())({}))
    assert player == PlayerSettings()


def test_values_and_nested_feedback() -> None:
    tts = _tts(
        {
            "engine": "piper",
            "voice": "/v/en.onnx",
            "rate_wpm": 200,
            "feedback": {"enabled": False, "done": "/s/done.wav"},
        }
    )
    assert tts.resolved_voice == "/v/en.onnx"
    assert tts.feedback == FeedbackSettings(enabled=False, done="/s/done.wav")


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"engine": "festival"}, "Fix: use one of espeak, piper, pocket"),
        ({"rate_wpm": 1000}, "from 80 to 450"),
        ({"volume": -1}, "from 0 to 200"),
        ({"pitch": "high"}, "expected a whole number"),
        ({"feedback": {"enabled": "yes"}}, "write true or false"),
        ({"voice": ""}, "1-512 characters"),
    ],
)
def test_bad_values_say_how_to_fix_them(data: dict[str, Any], needle: str) -> None:
    with pytest.raises(vol.Invalid, match=needle):
        _tts(data)


def test_player_ranges() -> None:
    schema = vol.Schema(PlayerSettings.schema())
    assert PlayerSettings.from_validated(schema({"rate_hz": 48000})).rate_hz == 48000
    with pytest.raises(vol.Invalid, match="8000 to 48000"):
        schema({"rate_hz": 96000})
