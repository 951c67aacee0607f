"""Test audio made at test time: eSpeak NG and flite voices, silence, noise at an SNR."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tempfile
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from satellite.audio.chunk import PIPELINE_RATE_HZ, AudioChunk, resample

Float = npt.NDArray[np.float32]
RATE = PIPELINE_RATE_HZ
#: Samples quieter than this (on a 16-bit scale) are trimmed from a clip's ends.
TRIM_LEVEL = 200.0


def have_espeak() -> bool:
    """True when Debian's espeak-ng program is installed."""
    return shutil.which("espeak-ng") is not None


def espeak(text: str, voice: str = "en-us", rate_wpm: int = 160, pitch: int = 50) -> Float:
    """Speak ``text`` with eSpeak NG; float samples on a 16-bit scale at 16 kHz, trimmed."""
    out = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(rate_wpm), "-p", str(pitch), "--stdout", text],
        capture_output=True,
        check=True,
    ).stdout
    return trim(wav_to_float(out))


def flite(text: str, voice: str = "kal16") -> Float:
    """Speak ``text`` with flite (a second, different synthesiser); trimmed, 16 kHz."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.wav"
        subprocess.run(
            ["flite", "-voice", voice, "-t", text, "-o", str(path)], check=True, capture_output=True
        )
        return trim(wav_to_float(path.read_bytes()))


def wav_to_float(data: bytes) -> Float:
    """A WAV file's samples as floats on a 16-bit scale, at 16 kHz."""
    with wave.open(io.BytesIO(data)) as wav:
        rate = wav.getframerate()
        raw = wav.readframes(wav.getnframes())
    audio = np.frombuffer(raw, dtype="<i2").astype(np.float32)
    return resample(audio, rate, RATE) if rate != RATE else audio


def trim(audio: Float, level: float = TRIM_LEVEL) -> Float:
    """Cut leading and trailing samples quieter than ``level``."""
    loud = np.nonzero(np.abs(audio) > level)[0]
    if not len(loud):
        return audio[:0]
    return audio[loud[0] : loud[-1] + 1]


def sounding(
    samples: npt.NDArray[np.generic], rate_hz: int, level: float, gap_seconds: float
) -> list[tuple[int, int]]:
    """(first, last) sample of each stretch louder than ``level``, split where it is quiet
    for more than ``gap_seconds`` (replies in an output recording); none in silence."""
    audible = np.flatnonzero(np.abs(samples) > level)
    if not len(audible):
        return []
    cuts = np.flatnonzero(np.diff(audible) > gap_seconds * rate_hz)
    starts = [int(audible[0]), *(int(i) for i in audible[cuts + 1])]
    ends = [*(int(i) for i in audible[cuts]), int(audible[-1])]
    return list(zip(starts, ends, strict=True))


def silence(seconds: float) -> Float:
    """Digital silence."""
    return np.zeros(round(seconds * RATE), dtype=np.float32)


def white_noise(seconds: float, rms: float, seed: int = 0) -> Float:
    """Gaussian white noise with the given RMS (16-bit scale)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(round(seconds * RATE)) * rms).astype(np.float32)


def rms(audio: Float) -> float:
    """Root mean square."""
    return float(np.sqrt(np.mean(np.square(audio.astype(np.float64))))) if len(audio) else 0.0


def active_rms(audio: Float) -> float:
    """RMS over the louder half of 20 ms frames (the speech, not the pauses)."""
    frames = len(audio) // 320
    if not frames:
        return rms(audio)
    energy = np.square(audio[: frames * 320].astype(np.float64)).reshape(frames, 320).mean(1)
    loud = np.sort(energy)[frames // 2 :]
    return float(np.sqrt(loud.mean()))


def add_noise(speech: Float, snr_db: float, seed: int = 0, reference: Float | None = None) -> Float:
    """Mix white noise into ``speech`` so that (active speech RMS / noise RMS) = ``snr_db``."""
    level = active_rms(reference if reference is not None else speech)
    noise_rms = level / (10.0 ** (snr_db / 20.0))
    return speech + white_noise(len(speech) / RATE, noise_rms, seed)


def to_chunk(audio: Float) -> AudioChunk:
    """Clip to 16 bits and wrap as a pipeline chunk."""
    return AudioChunk.from_int16(np.clip(np.round(audio), -32768, 32767).astype(np.int16))


def mic_chunks(audio: Float, seconds: float = 0.1) -> Iterator[AudioChunk]:
    """``audio`` in ``seconds`` chunks stamped with their time, as a microphone gives them."""
    samples = to_chunk(audio).to_int16()
    step = round(seconds * RATE)
    for at in range(0, len(samples), step):
        yield AudioChunk.from_int16(samples[at : at + step], timestamp_seconds=at / RATE)


@dataclass(frozen=True)
class Scene:
    """A wake word, a gap, a command, with the command's true start and end in seconds."""

    audio: Float
    command_start_seconds: float
    command_end_seconds: float

    @property
    def command_span(self) -> tuple[float, float]:
        """The command's (start, end), seconds."""
        return self.command_start_seconds, self.command_end_seconds


def wake_scene(
    command: str,
    voice: str = "en-us",
    rate_wpm: int = 150,
    lead_seconds: float = 1.0,
    gap_seconds: float = 0.45,
    tail_seconds: float = 1.5,
) -> Scene:
    """'okay nabu' + gap + command, between silences (add noise separately)."""
    wake = espeak("okay nabu", voice, rate_wpm)
    cmd = espeak(command, voice, rate_wpm)
    start = lead_seconds + len(wake) / RATE + gap_seconds
    audio = np.concatenate(
        [silence(lead_seconds), wake, silence(gap_seconds), cmd, silence(tail_seconds)]
    )
    return Scene(audio, start, start + len(cmd) / RATE)


# --- eSpeak NG with word and phoneme times ---------------------------------------------

#: Runs in a child process (libespeak-ng keeps global state; the TTS tests use it too):
#: reads JSON requests on stdin, writes <k>.npy audio and meta.json with the events.
_ESPEAK_EVENTS_CHILD = r"""
import ctypes, json, sys
import numpy as np
lib = ctypes.CDLL("libespeak-ng.so.1")
class Id(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p),
                ("string", ctypes.c_char * 8)]
class Ev(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint),
                ("text_position", ctypes.c_int), ("length", ctypes.c_int),
                ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", Id)]
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                      ctypes.POINTER(Ev))
rate = lib.espeak_Initialize(2, 0, None, 1)  # synchronous, phoneme events on
chunks, events = [], []
def collect(wav, n, ev):
    if n > 0:
        chunks.append(np.ctypeslib.as_array(wav, (n,)).copy())
    i = 0
    while ev[i].type != 0:
        e = ev[i]
        if e.type == 1:
            events.append(["word", e.sample, e.text_position])
        elif e.type == 7:
            events.append(["phoneme", e.sample, bytes(e.id.string).rstrip(b"\0").decode()])
        i += 1
    return 0
callback = CB(collect)
lib.espeak_SetSynthCallback(callback)
meta = []
for k, req in enumerate(json.loads(sys.stdin.read())):
    chunks.clear(); events.clear()
    if lib.espeak_SetVoiceByName(req["voice"].encode()) != 0:
        sys.exit("espeak-ng has no voice " + repr(req["voice"]))
    lib.espeak_SetParameter(1, int(req["rate_wpm"]), 0)
    lib.espeak_SetParameter(3, int(req["pitch"]), 0)
    text = req["text"].encode()
    lib.espeak_Synth(text, len(text) + 1, 0, 1, 0, 1, None, None)
    np.save(sys.argv[1] + "/%d.npy" % k,
            np.concatenate(chunks) if chunks else np.zeros(0, np.int16))
    meta.append({"rate_hz": rate, "events": list(events)})
json.dump(meta, open(sys.argv[1] + "/meta.json", "w"))
"""
#: eSpeak NG phoneme names that are vowels (one syllable each) start with these.
ESPEAK_VOWEL_START = frozenset("03@AEIOUVaeiou")


@dataclass(frozen=True)
class TimedSpeech:
    """eSpeak NG audio (16 kHz, 16-bit scale, untrimmed) with what it said and when.

    ``words``: (word as written, start s, end s); ``phonemes``: (eSpeak name, start s,
    end s), pauses included (names starting with ``_``).
    """

    audio: Float
    words: tuple[tuple[str, float, float], ...]
    phonemes: tuple[tuple[str, float, float], ...]

    @property
    def syllables(self) -> int:
        """Vowel phonemes eSpeak actually spoke (the true syllable count)."""
        return sum(1 for p in self.phonemes if p[0][:1] in ESPEAK_VOWEL_START)


def espeak_timed(requests: list[tuple[str, str, int, int]]) -> list[TimedSpeech]:
    """Synthesise (text, voice, rate_wpm, pitch) requests with libespeak-ng's events.

    Voices are names libespeak-ng knows (``en``, ``en-us``, ``en-gb-scotland``, with an
    optional ``+variant``). One child process serves the whole batch.
    """
    payload = [{"text": t, "voice": v, "rate_wpm": r, "pitch": p} for t, v, r, p in requests]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-c", _ESPEAK_EVENTS_CHILD, tmp],
            check=True,
            input=json.dumps(payload).encode(),
            capture_output=True,
        )
        meta = json.loads((Path(tmp) / "meta.json").read_text())
        return [
            _timed(
                req[0],
                np.load(Path(tmp) / f"{k}.npy").astype(np.float32),
                m["rate_hz"],
                m["events"],
            )
            for k, (req, m) in enumerate(zip(requests, meta, strict=True))
        ]


def _timed(text: str, raw: Float, rate_hz: int, events: list[list[object]]) -> TimedSpeech:
    total = len(raw) / rate_hz
    starts = [(str(e[2]), int(str(e[1])) / rate_hz) for e in events if e[0] == "phoneme"]
    phonemes = tuple(
        (name, start, starts[i + 1][1] if i + 1 < len(starts) else total)
        for i, (name, start) in enumerate(starts)
    )
    encoded = text.encode()
    names: list[str] = []  # each word as written
    spans: list[list[float]] = []  # [start, end] of its non-pause phonemes
    index = -1  # of the latest phoneme in ``phonemes``
    for e in events:
        if e[0] == "word":
            position = int(str(e[2])) - 1
            word = encoded[position:].split(maxsplit=1)[0].decode(errors="ignore")
            names.append(word.strip('.,;:!?"()'))
            spans.append([])
        elif e[0] == "phoneme":
            index += 1
            name, start, end = phonemes[index]
            if spans and not name.startswith("_"):
                spans[-1][:] = [spans[-1][0] if spans[-1] else start, end]
    timed = tuple((w, span[0], span[1]) for w, span in zip(names, spans, strict=True) if span)
    audio = resample(raw, rate_hz, RATE) if rate_hz != RATE else raw
    return TimedSpeech(audio, timed, phonemes)
