"""What an enrolment is made of: recordings of one speaker and what each one says.

Recordings are 16 kHz mono 16-bit PCM WAV files (the rate the recognizer hears), given
as a folder or as files. What each says comes, first found first:

1. ``--transcripts FILE``, or ``transcripts.tsv`` in the folder of the recordings: one
   line per recording, ``FILE.wav<TAB>what was said`` (``#`` starts a comment line);
2. otherwise the satellite's own prompts (``pocket-satellite enrol --prompts``), read
   aloud in order: the recordings sorted by file name are prompt 1, 2, 3, ...
"""

from __future__ import annotations

import re
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import SatelliteError

RATE_HZ = 16000
TRANSCRIPTS_FILE = "transcripts.tsv"
#: Less speech than this in all recordings together is too little to adapt to, s.
MIN_SPEECH_SECONDS = 5.0


class EnrolError(SatelliteError):
    """Enrolment cannot go on; the message says what to do."""


@dataclass(frozen=True)
class Recording:
    """One recording and what is said in it (lower case words)."""

    path: Path
    text: str
    seconds: float


def prompts() -> list[str]:
    """The sentences the satellite asks a new speaker to read aloud, in order."""
    text = resources.files("satellite").joinpath("data/enrol_prompts.txt").read_text("utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def find_wavs(inputs: Sequence[Path]) -> list[Path]:
    """The WAV files named, and those in the folders named, sorted by name per folder."""
    found: list[Path] = []
    for item in inputs:
        if item.is_dir():
            found += sorted(p for p in item.iterdir() if p.suffix.lower() == ".wav")
        elif item.is_file():
            found.append(item)
        else:
            raise EnrolError(f"{item} does not exist. Fix: give a folder of WAV files or WAV files")
    if not found:
        where = ", ".join(str(p) for p in inputs)
        raise EnrolError(
            f"No WAV files in {where}. Fix: record the prompts (pocket-satellite enrol "
            "--prompts) as 16 kHz mono WAV files into that folder"
        )
    return found


def wav_seconds(path: Path) -> float:
    """The length of a 16 kHz mono 16-bit WAV file; anything else is an ``EnrolError``."""
    try:
        with wave.open(str(path), "rb") as wav:
            rate, channels, width = wav.getframerate(), wav.getnchannels(), wav.getsampwidth()
            frames = wav.getnframes()
    except (wave.Error, EOFError) as err:
        raise EnrolError(f"{path} is not a PCM WAV file ({err}). Fix: record it as WAV") from err
    if (rate, channels, width) != (RATE_HZ, 1, 2):
        raise EnrolError(
            f"{path} is {rate} Hz, {channels} channel(s), {8 * width}-bit; enrolment needs "
            f"16000 Hz mono 16-bit. Fix: sox {path.name} -r 16000 -c 1 -b 16 "
            f"{path.stem}-16k.wav"
        )
    return frames / rate


def words_of(text: str) -> str:
    """Lower case words of a sentence, punctuation dropped (apostrophes kept)."""
    return " ".join(re.findall(r"[a-z']+", text.lower()))


def read_transcripts(path: Path) -> dict[str, str]:
    """``FILE.wav<TAB>text`` lines by file name."""
    table: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, tab, text = line.partition("\t")
        if not tab or not words_of(text):
            raise EnrolError(
                f"{path} line {number} is not 'FILE.wav<TAB>what was said'. Fix: one "
                "recording per line, its file name, a tab, then its words"
            )
        table[Path(name.strip()).name] = words_of(text)
    return table


def recordings(inputs: Sequence[Path], transcripts: Path | None = None) -> list[Recording]:
    """Every recording with its words, checked (see the module's docstring)."""
    wavs = find_wavs(inputs)
    if transcripts is None:
        beside = wavs[0].parent / TRANSCRIPTS_FILE
        transcripts = beside if beside.is_file() else None
    if transcripts is not None:
        if not transcripts.is_file():
            raise EnrolError(f"Transcripts file {transcripts} does not exist. Fix: give its path")
        table = read_transcripts(transcripts)
        missing = [w.name for w in wavs if w.name not in table]
        if missing:
            raise EnrolError(
                f"{transcripts} says nothing about {', '.join(missing[:5])}. Fix: add a line "
                "'FILE.wav<TAB>what was said' for every recording"
            )
        texts = [table[w.name] for w in wavs]
    else:
        sentences = prompts()
        if len(wavs) > len(sentences):
            raise EnrolError(
                f"{len(wavs)} recordings but only {len(sentences)} prompts, and no "
                f"{TRANSCRIPTS_FILE}. Fix: add {TRANSCRIPTS_FILE} beside the recordings "
                "('FILE.wav<TAB>what was said' per line), or --transcripts FILE"
            )
        texts = [words_of(s) for s in sentences[: len(wavs)]]
    found = [Recording(w, t, wav_seconds(w)) for w, t in zip(wavs, texts, strict=True)]
    total = sum(r.seconds for r in found)
    if total < MIN_SPEECH_SECONDS:
        raise EnrolError(
            f"The recordings hold {total:.1f} s in all; adapting needs at least "
            f"{MIN_SPEECH_SECONDS:g} s (20 prompts, about a minute, is what was measured). "
            "Fix: record more prompts"
        )
    return found
