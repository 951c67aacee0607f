"""The reply written by ``say`` is intelligible: PocketSphinx transcribes it back.

PocketSphinx (en-us, its full language model) stands in for a listener. The WAV is read
back at 16 kHz, a microphone-like noise floor is added (PocketSphinx's cepstral mean
normalisation misbehaves on digital silence, which no real room has), it is cut at the
pauses between sentences and the sentences are decoded twice with one decoder,
counting only the second pass: the first adapts the normalisation to the voice, as a
listener tunes in. As a check that the measure can
fail, the same audio played backwards (same spectrum, no words) scores far lower.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import numpy as np
import pytest

from satellite.audio.wav import read_wav
from satellite.cli import main
from tests import synth

pocketsphinx = pytest.importorskip("pocketsphinx", reason="pocketsphinx is not installed (dev)")

REPLY = (
    "The kitchen light is now on. Your daughter called and will visit on Sunday afternoon. "
    "Please take your medicine after breakfast."
)
#: Noise floor added before recognition, RMS on the 16-bit scale (about -60 dBFS).
NOISE_RMS = 30.0
#: A pause at least this long separates two sentences, s.
PAUSE_SECONDS = 0.25


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z' ]", " ", text.lower()).split()


def _segments(audio: synth.Float) -> list[synth.Float]:
    """Cut at pauses: 10 ms frames under the trim level, at least PAUSE_SECONDS long."""
    frames = len(audio) // 160
    loud = np.abs(audio[: frames * 160]).reshape(frames, 160).max(axis=1) > synth.TRIM_LEVEL
    pause = int(PAUSE_SECONDS * 100)
    out: list[synth.Float] = []
    start: int | None = None
    quiet = 0
    for index, is_loud in enumerate(loud):
        if is_loud:
            start = index if start is None else start
            quiet = 0
        elif start is not None:
            quiet += 1
            if quiet >= pause:
                out.append(audio[start * 160 : (index - quiet + 1) * 160])
                start, quiet = None, 0
    if start is not None:
        out.append(audio[start * 160 :])
    return out


def _recognised_words(audio: synth.Float, passes: int = 2) -> list[str]:
    decoder = pocketsphinx.Decoder(samprate=synth.RATE, loglevel="ERROR")
    utterances: list[bytes] = []
    for index, segment in enumerate(_segments(audio)):
        pad = synth.silence(0.3)
        noisy = np.concatenate([pad, segment, pad])
        noisy = noisy + synth.white_noise(len(noisy) / synth.RATE, NOISE_RMS, seed=index)
        utterances.append(np.clip(np.round(noisy), -32768, 32767).astype(np.int16).tobytes())
    heard: list[str] = []
    for attempt in range(passes):  # earlier passes only adapt the normalisation
        listening = attempt == passes - 1
        for pcm in utterances:
            decoder.start_utt()
            decoder.process_raw(pcm, full_utt=True)
            decoder.end_utt()
            hypothesis = decoder.hyp()
            if listening and hypothesis is not None:
                heard += hypothesis.hypstr.split()
    return heard


def _recovered(reference: list[str], heard: list[str]) -> float:
    matcher = difflib.SequenceMatcher(a=reference, b=heard, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(reference)


#: More replies, so one hard sentence does not decide: one rendering of a 21-word reply
#: moves by a word or two (eSpeak's output depends on what it synthesised before).
MORE_REPLIES = (
    "It is half past three in the afternoon. The heating is set to twenty degrees.",
    "I'm calling for help. Someone is on the way. Please stay where you are.",
    "Good morning. Today is Tuesday and it will be sunny and warm.",
)


def test_pocketsphinx_transcribes_the_reply(tmp_path: Path) -> None:
    matched = total = 0.0
    transcripts: list[str] = []
    for index, reply in enumerate((REPLY, *MORE_REPLIES)):
        path = tmp_path / f"reply{index}.wav"
        assert main(["say", reply, "--output", str(path)]) == 0
        audio = read_wav(path).to_int16().astype(np.float32)
        reference = _words(reply)
        heard = _recognised_words(audio)
        matched += _recovered(reference, heard) * len(reference)
        total += len(reference)
        transcripts.append(" ".join(heard))
    assert matched / total >= 0.8, (matched / total, transcripts)

    first = _segments(audio)[0]
    backwards = first[::-1].copy()  # the same sounds, no words
    first_words = _words(REPLY.split(".", maxsplit=1)[0])
    assert _recovered(first_words, _recognised_words(backwards, passes=1)) < 0.3
