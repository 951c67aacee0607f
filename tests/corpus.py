"""A corpus of many voices and rooms, made at test time and cached on disk.

Voices come from three synthesisers that sound nothing alike: eSpeak NG (formant
voices, several variants and rates), flite and Festival (recorded-speech voices:
diphone and HTS). Rooms: clean, a short synthetic reverberation, and white, pink,
babble (other speech), television-like (speech with music) and people (babble of
recorded people, tests/human_speech.py) noise at 20, 10 and 5 dB below the speech.
Shared by the robustness tests and bench/robustness.py.

Rendered speech is cached under ``POCKET_CORPUS_CACHE`` (default
``~/.cache/pocket-satellite/corpus``) by a hash of everything that made it (synthesiser,
voice, rate, text, corpus version), so a second run synthesises nothing. Noise is made
from a seed each time (cheap, and the same every run).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from scipy import signal

from tests import synth
from tests.synth import RATE, Float

#: Bump when rendering changes, so old cached audio is not reused.
CORPUS_VERSION = 1
CACHE = Path(
    os.environ.get("POCKET_CORPUS_CACHE", Path.home() / ".cache" / "pocket-satellite" / "corpus")
)
#: Reverberation time of the synthetic room, s (a small furnished room).
REVERB_RT60_SECONDS = 0.35
#: Talkers mixed into babble.
BABBLE_TALKERS = 4
#: Musical notes per second on the television.
TV_NOTES_PER_SECOND = 4.0

ENGINES = {"espeak": "espeak-ng", "flite": "flite", "festival": "text2wave"}


@dataclass(frozen=True)
class Voice:
    """A synthesiser voice. ``family``: ``espeak``, ``flite`` or ``festival``; ``rate``:
    words per minute for eSpeak, a duration stretch (1.0 = as built) for the others."""

    family: str
    name: str
    rate: float

    @property
    def label(self) -> str:
        """``family/name@rate``."""
        return f"{self.family}/{self.name}@{self.rate:g}"

    @property
    def available(self) -> bool:
        """Whether its synthesiser (and, for Festival, the voice) is installed."""
        if shutil.which(ENGINES[self.family]) is None:
            return False
        if self.family == "festival":
            return any(Path("/usr/share/festival/voices").glob(f"*/{self.name}"))
        return True


#: Every voice of the full set. Festival's come from Debian's festvox packages.
VOICES_ALL = (
    Voice("espeak", "en-us", 160),
    Voice("espeak", "en-us+f3", 140),
    Voice("espeak", "en-gb-x-rp", 180),
    Voice("flite", "slt", 1.0),
    Voice("flite", "kal16", 1.0),
    Voice("flite", "awb", 1.0),
    Voice("flite", "rms", 1.15),
    Voice("festival", "kal_diphone", 1.0),
    Voice("festival", "ked_diphone", 1.0),
    Voice("festival", "cmu_us_slt_arctic_hts", 1.0),
)
#: One voice per family for CI (flite's slt is the voice the old front end lost).
VOICES_CI = (
    Voice("espeak", "en-us", 160),
    Voice("flite", "slt", 1.0),
    Voice("festival", "kal_diphone", 1.0),
)
FAMILIES = ("espeak", "flite", "festival")


@dataclass(frozen=True)
class Room:
    """Where the speech is heard: ``kind`` is ``clean``, ``reverb``, ``white``, ``pink``,
    ``babble`` or ``tv``; ``snr_db``: speech (active RMS) over noise (RMS), dB."""

    kind: str
    snr_db: float | None = None

    @property
    def label(self) -> str:
        """``clean``, ``reverb`` or ``<kind> <snr> dB``."""
        return self.kind if self.snr_db is None else f"{self.kind} {self.snr_db:g} dB"

    @property
    def noisy(self) -> bool:
        """Whether noise is mixed in."""
        return self.snr_db is not None


NOISES = ("white", "pink", "babble", "tv", "people")
ROOMS_ALL = (
    Room("clean"),
    Room("reverb"),
    *(Room(kind, snr) for kind in NOISES for snr in (20.0, 10.0, 5.0)),
)
ROOMS_CI = (Room("clean"), Room("white", 10.0), Room("babble", 10.0))


def labelled(labels: Sequence[str]) -> tuple[Room, ...]:
    """The rooms of ``ROOMS_ALL`` with these labels (``clean``, ``white 10 dB``, ...), in
    its order; an unknown label raises ValueError naming the labels there are."""
    rooms = tuple(r for r in ROOMS_ALL if r.label in labels)
    if len(rooms) != len(labels):
        raise ValueError(f"use labels of {[r.label for r in ROOMS_ALL]}")
    return rooms


def available(voices: Sequence[Voice]) -> list[Voice]:
    """The voices whose synthesiser is installed."""
    return [v for v in voices if v.available]


def installed(label: str) -> Voice:
    """The corpus voice labelled ``label`` (``family/name@rate``, or only its name);
    the test asking for it is skipped if its synthesiser is not installed."""
    import pytest  # noqa: PLC0415  (only tests ask for one voice)

    voice = next(v for v in VOICES_ALL if label in (v.label, v.name))
    if not voice.available:
        pytest.skip(f"voice {voice.label} is not installed (scripts/bootstrap.sh installs it)")
    return voice


T = TypeVar("T")


def in_turn(
    voices: Sequence[Voice], family: str, items: Sequence[T]
) -> Iterator[tuple[int, Voice, T]]:
    """``items`` with their index, each said by the next of ``family``'s ``voices`` in turn
    (how the benches spread what is said over a family)."""
    members = [v for v in voices if v.family == family]
    for index, item in enumerate(items):
        yield index, members[index % len(members)], item


# --- speech -----------------------------------------------------------------------------


def speak(voice: Voice, text: str) -> Float:
    """``text`` in ``voice``: float samples on a 16-bit scale at 16 kHz, trimmed; cached."""
    key = json.dumps([CORPUS_VERSION, voice.family, voice.name, voice.rate, text])
    path = CACHE / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.npy"
    if path.exists():
        loaded: Float = np.load(path)
        return loaded
    audio = _render(voice, text).astype(np.float32)
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(partial, audio)
    partial.replace(path)  # atomic: parallel runs never read half a file
    return audio


def _render(voice: Voice, text: str) -> Float:
    if not voice.available:
        raise RuntimeError(
            f"voice {voice.label} is not installed: run scripts/bootstrap.sh "
            "(it installs espeak-ng, flite, festival and the festvox voices)"
        )
    if voice.family == "espeak":
        return synth.espeak(text, voice.name, round(voice.rate))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.wav"
        if voice.family == "flite":
            command = ["flite", "-voice", voice.name, "-t", text, "-o", str(out)]
            command += ["--setf", f"duration_stretch={voice.rate}"]
            subprocess.run(command, check=True, capture_output=True)
        else:
            setup = f"(voice_{voice.name}) (Parameter.set 'Duration_Stretch {voice.rate})"
            subprocess.run(
                ["text2wave", "-eval", setup, "-o", str(out)],
                input=text.encode(),
                check=True,
                capture_output=True,
            )
        return synth.trim(synth.wav_to_float(out.read_bytes()))


# --- rooms ------------------------------------------------------------------------------


def pink_noise(samples: int, seed: int) -> Float:
    """Unit-RMS pink (1/f power) noise."""
    rng = np.random.default_rng(seed)
    spectrum = np.fft.rfft(rng.standard_normal(samples))
    freqs = np.fft.rfftfreq(samples, 1.0 / RATE)
    spectrum[1:] /= np.sqrt(freqs[1:])
    spectrum[0] = 0.0
    return _unit(np.fft.irfft(spectrum, samples))


def babble(samples: int, seed: int, talkers: int = BABBLE_TALKERS) -> Float:
    """Unit-RMS babble: ``talkers`` voices reading out-of-domain sentences at once."""
    rng = np.random.default_rng(seed)
    voices = available(VOICES_ALL)
    mix = np.zeros(samples, dtype=np.float64)
    for talker in range(talkers):
        voice = voices[(seed + talker) % len(voices)]
        mix += _unit(reading(voice, samples, rng))
    return _unit(mix)


def people(samples: int, seed: int, talkers: int = BABBLE_TALKERS) -> Float:
    """Unit-RMS babble of recorded people (tests/human_speech.py, fetched once):
    ``talkers`` of them at once, each from a random point of the recordings back to back.
    Synthesized babble hid the wake word more: "okay nabu" at 10 dB woke the satellite
    (default configuration) in 19 / 26 / 13 % of eSpeak's / flite's / Festival's scenes
    (31 each), in this one 35 / 32 / 26 %."""
    rng = np.random.default_rng(seed)
    takes = _people_takes()
    mix = np.zeros(samples, dtype=np.float64)
    for _ in range(talkers):
        order = rng.permutation(len(takes))
        joined = np.concatenate([takes[i] for i in order])
        start = int(rng.integers(len(joined)))
        mix += np.resize(np.roll(joined, -start), samples)
    return _unit(mix)


@functools.cache
def _people_takes() -> tuple[Float, ...]:
    """The recordings of people, each at unit RMS (read once a process)."""
    from tests.human_speech import recordings  # noqa: PLC0415 (fetches on first use)

    return tuple(_unit(take.audio) for take in recordings())


def tv(samples: int, seed: int) -> Float:
    """Unit-RMS television: one voice reading, over music (harmonic notes with decays)
    at the same level."""
    rng = np.random.default_rng(seed)
    voices = available(VOICES_ALL)
    speech = _unit(reading(voices[seed % len(voices)], samples, rng))
    return _unit(speech + _music(samples, rng))


def reverberate(audio: Float, seed: int = 0, rt60_seconds: float = REVERB_RT60_SECONDS) -> Float:
    """``audio`` in a small room: convolved with exponentially decaying noise (the direct
    sound first), at the same active level."""
    rng = np.random.default_rng(seed)
    n = round(rt60_seconds * RATE)
    decay = np.exp(-6.9 * np.arange(n) / n)  # -60 dB at rt60
    response = rng.standard_normal(n) * decay * 0.25
    response[0] = 1.0
    wet = signal.fftconvolve(audio.astype(np.float64), response)[: len(audio)]
    level = synth.active_rms(audio)
    gain = level / max(synth.active_rms(wet.astype(np.float32)), 1e-9)
    out: Float = (wet * gain).astype(np.float32)
    return out


def in_room(audio: Float, room: Room, seed: int = 0, reference: Float | None = None) -> Float:
    """``audio`` heard in ``room``: noise at ``room.snr_db`` below the active RMS of
    ``reference`` (default: the audio itself), or reverberated."""
    if room.kind == "clean":
        return audio
    if room.kind == "reverb":
        return reverberate(audio, seed)
    if room.snr_db is None:
        raise ValueError(f"room {room.kind!r} needs an SNR")
    level = synth.active_rms(reference if reference is not None else audio)
    mixed: Float = (audio + noise_of(room, len(audio), seed, level)).astype(np.float32)
    return mixed


def noise_of(room: Room, samples: int, seed: int, speech_rms: float) -> Float:
    """``samples`` of ``room``'s noise, ``room.snr_db`` below speech of ``speech_rms``."""
    makers = {"white": _white, "pink": pink_noise, "babble": babble, "tv": tv, "people": people}
    if room.kind not in makers or room.snr_db is None:
        raise ValueError(
            f"room {room.kind!r} has no noise: use one of {', '.join(makers)} with an SNR"
        )
    noise: Float = makers[room.kind](samples, seed) * (speech_rms / 10.0 ** (room.snr_db / 20.0))
    return noise


def _white(samples: int, seed: int) -> Float:
    return synth.white_noise(samples / RATE, 1.0, seed)


def _unit(audio: npt.NDArray[np.floating[Any]]) -> Float:
    level = float(np.sqrt(np.mean(np.square(audio)))) if len(audio) else 0.0
    return (audio / level if level > 0 else audio).astype(np.float32)


def reading(voice: Voice, samples: int, rng: np.random.Generator) -> Float:
    """``samples`` of ``voice`` reading out-of-domain sentences (tests/data) back to back,
    from a random one."""
    from tests.understand import lines  # noqa: PLC0415 (understand imports the pipeline)

    sentences = lines("out_of_domain.txt")
    start = int(rng.integers(len(sentences)))
    parts: list[Float] = []
    total = 0
    k = start
    while total < samples:
        part = speak(voice, sentences[k % len(sentences)])
        parts.extend([part, synth.silence(0.15)])
        total += len(part) + round(0.15 * RATE)
        k += 1
    joined = np.concatenate(parts)
    offset = int(rng.integers(max(1, len(joined) - samples)))
    return joined[offset : offset + samples]


def _music(samples: int, rng: np.random.Generator) -> Float:
    """Notes of a few harmonics on a pentatonic scale, each decaying, overlapping."""
    out = np.zeros(samples, dtype=np.float64)
    step = round(RATE / TV_NOTES_PER_SECOND)
    scale = 220.0 * 2.0 ** (np.array([0, 2, 4, 7, 9, 12, 14, 16]) / 12.0)
    length = step * 3
    t = np.arange(length) / RATE
    envelope = np.exp(-t * 4.0)
    for start in range(0, samples, step):
        pitch = float(rng.choice(scale))
        note = sum(np.sin(2 * np.pi * pitch * h * t) / h for h in (1, 2, 3, 4))
        end = min(samples, start + length)
        out[start:end] += (note * envelope)[: end - start]
    return _unit(out)
