"""``pocket-satellite run`` as users run it, in a child process: the spoken reply reaches
the ALSA speaker (the ``file`` plugin) at any output rate, and a session replayed in real
time comes out aligned with its input."""

from __future__ import annotations

import datetime as dt
import itertools
import wave
from pathlib import Path

import numpy as np
import pytest
import soxr

from satellite.audio.chunk import to_float_mono
from satellite.tts.espeak import EspeakEngine
from satellite.understanding.dialogue import spoken_time
from tests import synth
from tests.cli_support import run_command
from tests.conftest import AlsaFiles

pytestmark = pytest.mark.usefixtures("need_espeak")

#: A sample counts as sound above this (int16), below it as the silence around replies.
SOUND = 300


def _session(folder: Path) -> tuple[Path, float, float]:
    """'okay nabu ... what time is it' with silence after it; the WAV, where the question
    ends and how long the input is, s."""
    pieces = [
        synth.silence(1.0),
        synth.espeak("okay nabu", "en-us", 150),
        synth.silence(0.45),
        synth.espeak("what time is it", "en-us", 150),
    ]
    question_end = sum(len(p) for p in pieces) / synth.RATE
    audio = np.concatenate([*pieces, synth.silence(3.5)])
    path = folder / "session.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(synth.RATE)
        out.writeframes(synth.to_chunk(audio).samples)
    return path, question_end, len(audio) / synth.RATE


#: The acknowledging tone lasts 0.23 s; an answer, a sentence, far longer.
TONE_AT_MOST = 0.4


def _config(folder: Path, output: str, rate_hz: int, tone: bool = True) -> Path:
    path = folder / "satellite.yaml"
    path.write_text(
        f"tts:\n  feedback:\n    enabled: {str(tone).lower()}\n"
        f"audio:\n  output: {output}\n"
        f"player:\n  rate_hz: {rate_hz}\n"
        "mqtt:\n  enabled: false\n"
        "llm:\n  enabled: false\n"
        "logging:\n  level: WARNING\n"
    )
    return path


def _reply_candidates(start: dt.datetime, end: dt.datetime, rate_hz: int) -> list[np.ndarray]:
    """The time answer as eSpeak says it, for each minute the run spanned, at ``rate_hz``."""
    engine = EspeakEngine()
    minute = start.replace(second=0, microsecond=0) - dt.timedelta(minutes=1)
    audio = []
    while minute <= end + dt.timedelta(minutes=1):
        chunks = list(engine.synthesize(f"It's {spoken_time(minute)}."))
        mono = np.concatenate([to_float_mono(c) for c in chunks])
        audio.append(soxr.resample(mono, chunks[0].rate_hz, rate_hz))
        minute += dt.timedelta(minutes=1)
    return audio


def _similarity(played: np.ndarray, reference: np.ndarray) -> float:
    """Best correlation of the two sounds from their onsets (a few samples either way)."""
    start = int(np.argmax(np.abs(played) > SOUND / 32768))
    ref_start = int(np.argmax(np.abs(reference) > SOUND / 32768))
    best = 0.0
    for shift in range(-40, 41):
        a = played[start + shift :] if start + shift >= 0 else played
        b = reference[ref_start:]
        n = min(len(a), len(b))
        if n > 1000:
            best = max(best, float(np.corrcoef(a[:n], b[:n])[0, 1]))
    return best


@pytest.mark.alsa
@pytest.mark.parametrize("rate_hz", [16000, 22050, 48000])
def test_run_speaks_the_reply_on_the_alsa_speaker(
    alsa_files: AlsaFiles, tmp_path: Path, rate_hz: int
) -> None:
    """eSpeak makes 22050 Hz; the speaker is opened at ``player.rate_hz`` and gets the
    reply converted to it, the same words as the engine says them."""
    wav, _, _ = _session(tmp_path)
    config = _config(tmp_path, "alsa:default", rate_hz, tone=False)
    began = dt.datetime.now()
    code, _, err = run_command("run", "--config", str(config), "--input", str(wav))
    ended = dt.datetime.now()
    assert code == 0, err
    assert "Traceback" not in err and "AudioDeviceError" not in err, err
    played = np.frombuffer(alsa_files.playback_out.read_bytes(), dtype="<i2")
    assert np.any(np.abs(played) > SOUND), "nothing was played"
    stretches = synth.sounding(played, rate_hz, SOUND, 0.1)
    assert len(stretches) == 1, stretches  # the answer (sounds are off: no tone first)
    ((first, last),) = stretches
    assert (last - first) / rate_hz > 1.0  # a sentence, not a click
    floats = played[max(0, first - rate_hz // 20) :].astype(np.float32) / 32768
    best = max(_similarity(floats, ref) for ref in _reply_candidates(began, ended, rate_hz))
    assert best > 0.9, best


def test_realtime_replay_lines_the_reply_up_with_the_input(tmp_path: Path) -> None:
    """``--realtime``: the output WAV is as long as the session, silent while the person
    speaks, and the reply starts after the question, as a listener would hear it."""
    wav, question_end, seconds = _session(tmp_path)
    out = tmp_path / "out.wav"
    config = _config(tmp_path, '"null"', 22050)
    code, _, err = run_command(
        "run", "--config", str(config), "--input", str(wav), "--realtime", "--output", str(out)
    )
    assert code == 0, err
    with wave.open(str(out)) as reader:
        rate = reader.getframerate()
        played = np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2")
    assert rate == 22050
    assert len(played) / rate >= seconds - 0.05
    stretches = [(a / rate, b / rate) for a, b in synth.sounding(played, rate, SOUND, 0.1)]
    assert stretches, "nothing was played"
    if stretches[0][1] - stretches[0][0] < TONE_AT_MOST:
        # not sure enough to be answered at once (it might go on): the tone comes as
        # soon as it is understood, the answer once the follow-on window (1 s after the
        # end of speech the VAD saw, a little before ``question_end``) has passed
        (tone, _), *answer = stretches
        assert answer, stretches
        assert question_end < tone < question_end + 0.8, (question_end, tone)
        assert question_end + 0.85 < answer[0][0] < question_end + 2.5, (question_end, answer)
    else:  # heard sure and complete: answered at once, with no tone
        answer = stretches
        assert question_end < answer[0][0] < question_end + 0.8, (question_end, answer)
    # one sentence, though the time it tells may pause inside ("It's 9:05 in the evening")
    gaps = [b - a for (_, a), (b, _) in itertools.pairwise(answer)]
    assert all(gap < 0.5 for gap in gaps), stretches
