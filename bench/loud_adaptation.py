"""Build the acoustic model's adaptation to speech heard in a loud room.

Run on one core:  taskset -c 1 python bench/loud_adaptation.py [--families ...] [--name N]

Sentences that are no test command (the enrolment prompts and tests/data/out_of_domain.txt,
those whose words are all in the dictionary) read by many synthesiser voices (eSpeak NG,
flite and Festival voices and rates, others than the corpus's where the synthesiser has
them), each in white or pink noise at 10 dB or white noise at 15 dB below the speech,
heard through the front end's noise suppressor as the recognizer hears a loud room, then
one global MLLR mean transform solved from them with the enrolment's tools
(satellite/enrol: sphinx_fe, bw, mllr_solve).

Without ``--name`` it writes the transform the satellite ships
(``satellite/data/loud_mllr_matrix``, used with ``stt.loud_adaptation``); with ``--name``
it enrols the transform as a speaker of that name in ``--speakers-dir``, for measuring
one trained without a voice family (held out):

    python bench/loud_adaptation.py --families espeak flite --name loud-no-festival
    python bench/robustness.py --skip wake ood --no-wake --rooms 'white 10 dB' \\
        --set stt.loud_adaptation=false stt.speaker=loud-no-festival \\
        stt.speakers_dir=/tmp/loud-speakers

Writes bench/results/loud_adaptation[_NAME].json and prints what went in.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, print_table, write_results
from satellite.audio.chunk import AudioChunk
from satellite.config import Config
from satellite.enrol import enrol, prompts, recordings
from satellite.enrol.inputs import words_of
from satellite.frontend.noise import make_noise_suppressor
from satellite.stt.lexicon import dictionary_words, pocketsphinx_model_dir
from satellite.stt.speakers import MLLR_FILE
from satellite.stt.sphinx_decoders import LOUD_MLLR
from tests import corpus, synth
from tests.enrol_support import PAUSE_SECONDS, write_wav
from tests.understand import FLOOR_RMS, commands

ROOT = Path(__file__).resolve().parent.parent
#: The voices read the sentences, per family (rates unlike the corpus's where it has them).
VOICES = {
    "espeak": [
        corpus.Voice("espeak", name, rate)
        for name, rate in (
            ("en-us", 150),
            ("en-us+f3", 170),
            ("en-gb-x-rp", 160),
            ("en-us+m3", 160),
            ("en-us+f2", 150),
            ("en", 170),
        )
    ],
    "flite": [
        corpus.Voice("flite", name, rate)
        for name, rate in (("slt", 0.95), ("kal16", 1.1), ("awb", 1.0), ("rms", 1.05), ("kal", 1.0))
    ],
    "festival": [
        corpus.Voice("festival", name, rate)
        for name, rate in (
            ("kal_diphone", 1.1),
            ("ked_diphone", 0.95),
            ("cmu_us_slt_arctic_hts", 1.05),
        )
    ],
}
#: The rooms, in turn: noise kind and speech-to-noise ratio, dB.
ROOMS = (corpus.Room("white", 10.0), corpus.Room("pink", 10.0), corpus.Room("white", 15.0))
PER_VOICE = 30


def sentences() -> list[str]:
    """Sentences no test command, every word in the recognizer's dictionary."""
    known = dictionary_words(str(pocketsphinx_model_dir("en") / "cmudict-en-us.dict"))
    said = {text for text, _, _ in commands()}
    ood = (ROOT / "tests" / "data" / "out_of_domain.txt").read_text("utf-8").splitlines()
    every = [*prompts(), *(ln.strip() for ln in ood if ln.strip() and not ln.startswith("#"))]
    return [s for s in every if s not in said and all(w in known for w in words_of(s).split())]


def denoised(audio: synth.Float, config: Config) -> synth.Float:
    """``audio`` through the front end's noise suppressor, as a loud room is heard."""
    noise = config.frontend.noise
    suppressor = make_noise_suppressor(noise.engine, noise.suppression_db, noise.webrtc_level)
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    out = []
    for start in range(0, len(samples) - 159, 160):
        frame = AudioChunk(16000, 2, 1, samples[start : start + 160].tobytes())
        out.append(np.frombuffer(suppressor.process(frame).samples, dtype=np.int16))
    return np.concatenate(out).astype(np.float32)


def record(families: list[str], folder: Path, per_voice: int) -> list[dict[str, Any]]:
    """The readings as WAV files with ``transcripts.tsv`` in ``folder``; one row per voice."""
    texts = sentences()
    config = Config()
    lines: list[str] = []
    rows: list[dict[str, Any]] = []
    for family in families:
        for index, voice in enumerate(VOICES[family]):
            if not voice.available:
                rows.append({"voice": voice.label, "readings": 0, "note": "not installed"})
                continue
            for k in range(per_voice):
                text = texts[(index * 7 + k) % len(texts)]
                room = ROOMS[(index + k) % len(ROOMS)]
                said = corpus.speak(voice, text)
                pause = synth.silence(PAUSE_SECONDS)
                audio = np.concatenate([pause, said, pause])
                seed = 1000 + len(lines)
                heard = corpus.in_room(audio, room, seed, reference=said)
                heard = heard + synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed + 7)
                path = folder / f"r{len(lines):04d}.wav"
                write_wav(path, denoised(heard, config))
                lines.append(f"{path.name}\t{words_of(text)}")
            rows.append({"voice": voice.label, "readings": per_voice})
    (folder / "transcripts.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=list(VOICES), choices=list(VOICES))
    parser.add_argument("--per-voice", type=int, default=PER_VOICE, help="readings per voice")
    parser.add_argument("--name", help="enrol as this speaker instead of writing the shipped one")
    parser.add_argument("--speakers-dir", default="/tmp/loud-speakers", type=Path)
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-loud-") as tmp:
        work = Path(tmp)
        folder = work / "readings"
        folder.mkdir()
        rows = record(args.families, folder, args.per_voice)
        speaker = args.name or "loud"
        speakers = args.speakers_dir if args.name else work / "speakers"
        done = enrol(speaker, recordings([folder]), speakers)
        if not args.name:
            shutil.copyfile(done.mllr_path, ROOT / "satellite" / LOUD_MLLR)
    target = speakers / speaker / MLLR_FILE if args.name else ROOT / "satellite" / LOUD_MLLR
    print_table(["voice", "readings"], [[r["voice"], r["readings"]] for r in rows])
    print(
        f"{len(done.used)} readings ({done.speech_seconds:.0f} s), {len(done.ignored)} not "
        f"aligned; adapted in {done.adapt_seconds:.1f} s -> {target}"
    )
    results = {
        "machine": machine(),
        "families": args.families,
        "rooms": [room.label for room in ROOMS],
        "voices": rows,
        "used": len(done.used),
        "not_aligned": len(done.ignored),
        "speech_seconds": done.speech_seconds,
        "adapt_seconds": done.adapt_seconds,
        "seconds": round(time.perf_counter() - started, 1),
        "written": str(target),
    }
    print(write_results("loud_adaptation" + (f"_{args.name}" if args.name else ""), results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
