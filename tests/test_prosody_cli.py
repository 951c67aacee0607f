"""What is not speech is not judged; the ``prosody`` command on a recording."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest

from satellite.cli import main
from satellite.prosody.events import INSUFFICIENT_SPEECH, Alert, Prosody
from satellite.prosody.monitor import ProsodyMonitor, measure
from satellite.prosody.settings import ProsodySettings
from tests.synth import RATE, Float, add_noise, espeak, have_espeak, silence, to_chunk
from tests.test_prosody_units import _measurement

needs_espeak = pytest.mark.skipif(not have_espeak(), reason="espeak-ng is not installed")


def _notes(freqs_hz: list[float], harmonics: int, note_seconds: float = 0.22) -> Float:
    t = np.arange(int(note_seconds * RATE)) / RATE
    envelope = np.minimum(1.0, np.minimum(t / 0.02, (note_seconds - t) / 0.05))
    notes = []
    for f in freqs_hz:
        tone = sum(np.sin(2 * np.pi * f * h * t) / h for h in range(1, harmonics + 1))
        notes += [8000.0 * envelope * tone, silence(0.06)]
    return np.concatenate([silence(0.5), *notes, silence(0.3)]).astype(np.float32)


MELODY = [262.0, 294.0, 330.0, 349.0, 392.0, 440.0, 494.0, 523.0, 494.0, 440.0, 392.0, 330.0]


def _cases() -> dict[str, Float]:
    cases = {
        "silence": silence(3.0),
        "quiet noise": add_noise(silence(3.0), 0.0, seed=1, reference=np.full(10, 30.0)),
        "pure-tone melody": _notes(MELODY, 1),
        "harmonic melody": _notes(MELODY, 4),
        "beeps": _notes([1000.0] * 10, 1, note_seconds=0.12),
    }
    if have_espeak():
        sentence = espeak("Could you please turn the heating up a little bit?", "en-us", 170)
        cases["clipped speech"] = np.clip(sentence * 30.0, -32768, 32767)
        cases["one word"] = np.concatenate(
            [silence(0.5), espeak("Hello.", "en-us", 170), silence(0.3)]
        )
        cases["two words"] = np.concatenate(
            [silence(0.5), espeak("Yes, please.", "en-us", 300), silence(0.3)]
        )
    return cases


@pytest.mark.parametrize("name", list(_cases()))
def test_not_speech_is_not_judged_and_raises_no_alert(name: str) -> None:
    settings = ProsodySettings(min_baseline=5)
    monitor = ProsodyMonitor(settings)
    for i in range(8):  # a ready baseline at a calm 4.3 syllables/s
        monitor.judge(_measurement(4.3), f"calm{i}", 60.0 * i)
    audio = _cases()[name]
    events = []
    for i in range(3):  # three in a row: any judged fast one would alert
        m = measure(to_chunk(audio), settings)
        assert not m.judged, (name, m.detail, m.estimate)
        events += monitor.judge(m, f"x{i}", 1000.0 + i)
    assert not [e for e in events if isinstance(e, Alert)]
    prosody = [e for e in events if isinstance(e, Prosody)]
    assert len(prosody) == 3
    for event in prosody:
        assert not event.judged
        assert event.reason == INSUFFICIENT_SPEECH
        assert event.detail
        assert event.ratio is None
    assert monitor.baselines.get("_satellite").count == 8  # nothing learnt


@needs_espeak
def test_real_speech_next_to_the_rejects_is_judged() -> None:
    speech = espeak("Could you please turn the heating up a little bit?", "en-us", 170)
    m = measure(to_chunk(np.concatenate([silence(0.5), speech, silence(0.3)])), ProsodySettings())
    assert m.judged
    assert m.estimate is not None
    assert 10 <= m.estimate.syllables <= 16


def _write_wav(path: Path, audio: Float) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(to_chunk(audio).samples)


@needs_espeak
def test_prosody_command_prints_one_json_object_per_utterance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calm = espeak("Could you turn the light on in the kitchen, please?", "en-us", 150)
    fast = espeak("I feel dizzy, please get the nurse right away, it is urgent.", "en-us", 300)
    word = espeak("Thanks.", "en-us", 150)
    audio = np.concatenate(
        [silence(0.8), calm, silence(1.2), fast, silence(1.2), word, silence(0.3)]
    )
    path = tmp_path / "talk.wav"
    _write_wav(path, add_noise(audio, 35.0, reference=calm))
    assert main(["prosody", "--input", str(path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["type"] for line in lines] == ["prosody"] * 3
    first, second, third = lines
    for line in (first, second):
        assert line["judged"] is True
        assert line["source"] == "acoustic"
        assert line["syllables"] >= 10
        assert line["speaking_rate"] > 0
        assert line["articulation_rate"] >= line["speaking_rate"]
    assert second["articulation_rate"] > 1.5 * first["articulation_rate"]
    assert first["start_seconds"] == pytest.approx(0.8, abs=0.15)
    assert third["judged"] is False
    assert third["reason"] == INSUFFICIENT_SPEECH
