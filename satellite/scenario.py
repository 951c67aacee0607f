"""The demo's scenario, spoken at install time (``pocket-satellite scenario OUT.wav``).

A session of a resident talking to the satellite, synthesised with the eSpeak NG that
ships in the package (nothing is downloaded, no large WAV is committed): each turn is
"okay nabu", a pause, a request, and time for the answer. Beside the WAV goes a JSON
script of the turns (what was said, where it ends, what should come of it), which the
tests and the end-to-end bench read.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import wave
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soxr

from .audio.chunk import PIPELINE_RATE_HZ, AudioChunk, float_to_int16, to_float_mono
from .audio.wav import write_wav
from .errors import SatelliteError
from .tts.espeak import EspeakEngine

WAKE_TEXT = "okay nabu"
#: Silence before the first turn, after the wake word, and after each request, s.
LEAD_SECONDS = 1.0
AFTER_WAKE_SECONDS = 0.45
ANSWER_SECONDS = 5.0

Float = npt.NDArray[np.float32]


#: The demo's resident: flite's recorded-speech voice ``rms`` (PocketSphinx hears eSpeak
#: NG's formant voices far worse than people; see the README's figures per voice).
RESIDENT = "flite:rms"


@dataclass(frozen=True)
class Turn:
    """One request ("okay nabu" first): its words, what should come of it, how fast and
    in which voice (an eSpeak NG voice, or ``flite:NAME``) it is said."""

    text: str
    expect: str
    rate_wpm: int = 150
    voice: str = RESIDENT


#: Two home commands, a care question, a symptom no template knows (the LLM takes it for
#: a call for help), a rushed sentence and a call for help in the templates' words.
DEMO_TURNS = (
    Turn("turn on the kitchen light", "HassTurnOn"),
    Turn("what time is it", "GetTime"),
    Turn("turn off the bedroom lamp", "HassTurnOff"),
    Turn("my chest hurts and I feel faint", "CallForHelp (llm)"),
    Turn("I must hurry because the bus leaves in two minutes", "rushed speech", 280),
    Turn("please call the nurse", "CallForHelp"),
)


@dataclass(frozen=True)
class ScriptLine:
    """Where a turn's request lies in the scenario, s, and what should come of it."""

    text: str
    expect: str
    start_seconds: float
    end_seconds: float


def speak(engine: EspeakEngine, text: str, rate_wpm: int, voice: str) -> Float:
    """``text`` at the pipeline's rate, trimmed of silence at the ends: eSpeak NG's
    ``voice``, or flite's with ``flite:NAME`` (Debian's flite; 150 wpm is its own pace)."""
    if voice.startswith("flite:"):
        chunk = _flite(text, voice[6:], 150 / rate_wpm)
    else:
        engine.rate_wpm = rate_wpm
        chunks = list(engine.synthesize(text, voice))
        chunk = AudioChunk(chunks[0].rate_hz, 2, 1, b"".join(c.samples for c in chunks))
    audio = to_float_mono(chunk)
    audio = np.asarray(soxr.resample(audio, chunk.rate_hz, PIPELINE_RATE_HZ), np.float32)
    loud = np.flatnonzero(np.abs(audio) > 0.01)
    return audio[loud[0] : loud[-1] + 1] if len(loud) else audio


def _flite(text: str, voice: str, stretch: float) -> AudioChunk:
    program = shutil.which("flite")
    if program is None:
        raise SatelliteError(
            "The scenario speaks with flite (Debian's recorded-speech voices), which is not "
            "installed. Fix: apt-get install flite (scripts/bootstrap.sh does it)"
        )
    result = subprocess.run(
        [
            program,
            "-voice",
            voice,
            "--setf",
            f"duration_stretch={stretch:.3f}",
            "-t",
            text,
            "-o",
            "/dev/stdout",
        ],
        capture_output=True,
        check=True,
        timeout=60,
    )
    with wave.open(io.BytesIO(result.stdout)) as wav:
        data = wav.readframes(wav.getnframes())
        return AudioChunk(wav.getframerate(), wav.getsampwidth(), wav.getnchannels(), data)


def render(turns: tuple[Turn, ...] = DEMO_TURNS) -> tuple[AudioChunk, list[ScriptLine]]:
    """The scenario's audio (16 kHz mono) and its script."""
    engine = EspeakEngine()
    pieces: list[Float] = [np.zeros(int(LEAD_SECONDS * PIPELINE_RATE_HZ), np.float32)]
    script: list[ScriptLine] = []
    position = LEAD_SECONDS
    for turn in turns:
        wake = speak(engine, WAKE_TEXT, 150, turn.voice)
        request = speak(engine, turn.text, turn.rate_wpm, turn.voice)
        pause = np.zeros(int(AFTER_WAKE_SECONDS * PIPELINE_RATE_HZ), np.float32)
        answer = np.zeros(int(ANSWER_SECONDS * PIPELINE_RATE_HZ), np.float32)
        start = position + (len(wake) + len(pause)) / PIPELINE_RATE_HZ
        end = start + len(request) / PIPELINE_RATE_HZ
        script.append(ScriptLine(turn.text, turn.expect, round(start, 3), round(end, 3)))
        pieces += [wake, pause, request, answer]
        position = end + ANSWER_SECONDS
    audio = np.concatenate(pieces)
    return AudioChunk.from_int16(float_to_int16(audio)), script


def script_path(wav: Path) -> Path:
    """Where the script of the scenario ``wav`` is kept."""
    return wav.with_suffix(".json")


def write_scenario(wav: Path, turns: tuple[Turn, ...] = DEMO_TURNS) -> list[ScriptLine]:
    """Write the scenario's WAV and its JSON script beside it."""
    audio, script = render(turns)
    write_wav(wav, audio)
    script_path(wav).write_text(json.dumps([asdict(line) for line in script], indent=1) + "\n")
    return script


def read_script(wav: Path) -> list[ScriptLine]:
    """The script written beside the scenario ``wav``."""
    return [ScriptLine(**line) for line in json.loads(script_path(wav).read_text())]
