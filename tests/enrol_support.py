"""Enrolment recordings made at test time: the satellite's prompts read by a corpus
voice in a corpus room, written as 16 kHz mono WAV files. Shared by tests/test_enrol.py
and bench/enrol.py."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from satellite.enrol import prompts
from tests import corpus, synth
from tests.understand import FLOOR_RMS, commands

#: Silence around each sentence, s (a person pauses before and after reading).
PAUSE_SECONDS = 0.3


def write_wav(path: Path, audio: synth.Float, rate_hz: int = synth.RATE) -> None:
    """Float samples on a 16-bit scale as a mono 16-bit WAV file."""
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate_hz)
        out.writeframes(samples.tobytes())


def record_prompts(
    voice: corpus.Voice, room: corpus.Room, folder: Path, count: int, first: int = 0
) -> list[Path]:
    """Prompts ``first`` .. ``first + count - 1`` read by ``voice`` in ``room`` (over a quiet
    room's floor), as ``prompt01.wav`` ... in ``folder``: the layout ``enrol`` reads with
    no transcripts when ``first`` is 0."""
    said_commands = {text for text, _, _ in commands()}
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, text in enumerate(prompts()[first : first + count], first):
        assert text not in said_commands, f"prompt {text!r} is a test command"
        said = corpus.speak(voice, text)
        pause = synth.silence(PAUSE_SECONDS)
        audio = np.concatenate([pause, said, pause])
        heard = corpus.in_room(audio, room, index, reference=said)
        heard = heard + synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed=index + 7)
        path = folder / f"prompt{index + 1:02d}.wav"
        write_wav(path, heard)
        paths.append(path)
    return paths
