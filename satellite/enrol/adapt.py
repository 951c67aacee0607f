"""Adapt PocketSphinx's acoustic model to one speaker: MLLR with sphinxtrain.

The standard CMU Sphinx recipe, run on the model the ``pocketsphinx`` wheel ships:
``sphinx_fe`` computes the recordings' cepstra with the model's own front-end settings
(``feat.params``; silence kept, as the decoder keeps it), ``bw`` collects Baum-Welch
statistics of each recording aligned to its transcript, and ``mllr_solve`` solves one
global MLLR transform of the Gaussian means (``A``, ``b`` per feature stream) from them.
The decoder applies it when loaded with ``mllr`` (``stt.speaker``): every Gaussian
moves towards this speaker's voice, nothing else in the model changes, and with no
speaker selected the model is the one shipped.

Why this route: these tools are Debian packages on x86 and on the Pi (arm64), run in
about a second for 20 sentences, and write the transform in the very text form the
decoder reads. The wheel's model has no ``mixture_weights`` (only the quantised
``sendump``), which ``bw`` needs: ``mixture.py`` writes them from ``sendump``.
MAP (moving each Gaussian on its own) needs far more speech than 20 sentences, and
regression classes more than one transform's worth; neither is done here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..stt.lexicon import dictionary_words, pocketsphinx_model_dir
from ..stt.speakers import MANIFEST_FILE, MLLR_FILE, speaker_dir
from .inputs import EnrolError, Recording
from .mixture import read_sendump, write_s3
from .tools import run_tool

METHOD = "MLLR, one global mean transform (sphinxtrain bw + mllr_solve)"
_IGNORED = re.compile(r"(utt\d+) ignored")


@dataclass(frozen=True)
class Enrolment:
    """What an enrolment made: the transform and what went into it."""

    speaker: str
    mllr_path: Path
    used: list[str]
    ignored: list[str] = field(default_factory=list)
    speech_seconds: float = 0.0
    adapt_seconds: float = 0.0
    #: CPU time of the adaptation (this process and the tools), s.
    adapt_cpu_seconds: float = 0.0


def feat_params(model: Path) -> dict[str, str]:
    """The model's front-end and feature settings (``feat.params``: ``-key value``)."""
    params: dict[str, str] = {}
    for line in (model / "feat.params").read_text(encoding="utf-8").splitlines():
        key, _, value = line.strip().partition(" ")
        if key.startswith("-"):
            params[key[1:]] = value.strip()
    return params


def _dictionary(recordings: Sequence[Recording], source: str, path: Path) -> None:
    words = dictionary_words(source)
    wanted = {w for r in recordings for w in r.text.split()}
    unknown = sorted(w for w in wanted if w not in words)
    if unknown:
        raise EnrolError(
            f"Not in the pronunciation dictionary: {', '.join(unknown[:10])}. Fix: use "
            "other words in the transcripts (the prompts are all in it)"
        )
    with open(source, encoding="utf-8") as handle:
        lines = [ln for ln in handle if ln.split(" ", 1)[0].split("(", 1)[0] in wanted]
    path.write_text("".join(lines), encoding="utf-8")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _described(recording: Recording, used: bool) -> dict[str, Any]:
    return {
        "file": os.fspath(recording.path.resolve()),
        "sha256": _sha256(recording.path),
        "seconds": round(recording.seconds, 2),
        "text": recording.text,
        "used": used,
    }


def _cpu_seconds() -> float:
    """CPU time of this process and the tools it ran, s."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    tools = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + tools.ru_utime + tools.ru_stime


def solve(
    recordings: Sequence[Recording], work: Path, language: str = "en"
) -> tuple[Path, list[str]]:
    """Run the tools in ``work``: the transform's path and the ids of the recordings
    ``bw`` could not align to their words (``uttNNN``, in input order from 1)."""
    base = pocketsphinx_model_dir(language)
    model = base / "en-us"
    params = feat_params(model)
    wavs, feats, accum = work / "wav", work / "feats", work / "accum"
    for folder in (wavs, feats, accum):
        folder.mkdir()
    ids = [f"utt{n:03d}" for n in range(1, len(recordings) + 1)]
    for utt, recording in zip(ids, recordings, strict=True):
        (wavs / f"{utt}.wav").symlink_to(recording.path.resolve())
    (work / "fileids").write_text("".join(f"{u}\n" for u in ids), encoding="utf-8")
    (work / "transcription").write_text(
        "".join(f"<s> {r.text} </s> ({u})\n" for u, r in zip(ids, recordings, strict=True)),
        encoding="utf-8",
    )
    _dictionary(recordings, os.fspath(base / "cmudict-en-us.dict"), work / "words.dict")
    write_s3(work / "mixture_weights", read_sendump(model / "sendump"))
    run_tool(
        "pocketsphinx_mdef_convert",
        ["-text", os.fspath(model / "mdef"), os.fspath(work / "mdef.txt")],
        work / "mdef.log",
    )
    fe_args = ["-argfile", os.fspath(model / "feat.params"), "-remove_silence", "no"]
    fe_args += ["-samprate", "16000", "-c", os.fspath(work / "fileids"), "-di", os.fspath(wavs)]
    fe_args += ["-do", os.fspath(feats), "-ei", "wav", "-eo", "mfc", "-mswav", "yes"]
    run_tool("sphinx_fe", fe_args, work / "fe.log")
    tying = f".{params.get('model', 'ptm')}."  # .ptm. / .semi. / .cont.: how Gaussians are shared
    bw_args = ["-moddeffn", os.fspath(work / "mdef.txt"), "-ts2cbfn", tying]
    bw_args += ["-mixwfn", os.fspath(work / "mixture_weights")]
    for key, name in (
        ("meanfn", "means"),
        ("varfn", "variances"),
        ("tmatfn", "transition_matrices"),
    ):
        bw_args += [f"-{key}", os.fspath(model / name)]
    bw_args += ["-feat", params.get("feat", "1s_c_d_dd"), "-cmn", "current", "-agc", "none"]
    if "svspec" in params:
        bw_args += ["-svspec", params["svspec"]]
    bw_args += [
        "-dictfn",
        os.fspath(work / "words.dict"),
        "-fdictfn",
        os.fspath(model / "noisedict"),
    ]
    bw_args += ["-ctlfn", os.fspath(work / "fileids"), "-lsnfn", os.fspath(work / "transcription")]
    bw_args += ["-cepdir", os.fspath(feats), "-accumdir", os.fspath(accum), "-timing", "no"]
    output = run_tool("bw", bw_args, work / "bw.log")
    ignored = sorted(set(_IGNORED.findall(output)))
    if len(ignored) == len(ids):
        raise EnrolError(
            "No recording could be aligned to its words. Fix: check that each recording "
            "says its sentence (transcripts.tsv, or the prompts in order), 16 kHz mono"
        )
    mllr = work / MLLR_FILE
    solve_args = ["-meanfn", os.fspath(model / "means"), "-varfn", os.fspath(model / "variances")]
    solve_args += ["-outmllrfn", os.fspath(mllr), "-accumdir", os.fspath(accum)]
    run_tool("mllr_solve", solve_args, work / "mllr_solve.log")
    return mllr, ignored


def enrol(
    speaker: str,
    recordings: Sequence[Recording],
    speakers_dir: str | Path,
    language: str = "en",
) -> Enrolment:
    """Adapt to ``speaker`` from ``recordings`` and store the transform and what it was
    built from in the speaker's folder (replacing an earlier enrolment whole)."""
    target = speaker_dir(speakers_dir, speaker)
    started = _cpu_seconds(), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pocket-enrol-") as tmp:
        mllr, ignored = solve(recordings, Path(tmp), language)
        ids = [f"utt{n:03d}" for n in range(1, len(recordings) + 1)]
        manifest: dict[str, Any] = {
            "speaker": speaker,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "method": METHOD,
            "model": os.fspath(pocketsphinx_model_dir(language) / "en-us"),
            "model_means_sha256": _sha256(pocketsphinx_model_dir(language) / "en-us" / "means"),
            "recordings": [
                _described(r, u not in ignored) for u, r in zip(ids, recordings, strict=True)
            ],
            "used": len(ids) - len(ignored),
            "ignored": len(ignored),
            "speech_seconds": round(sum(r.seconds for r in recordings), 2),
            "adapt_seconds": round(time.perf_counter() - started[1], 2),
            "adapt_cpu_seconds": round(_cpu_seconds() - started[0], 2),
        }
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{speaker}-", dir=target.parent))
        shutil.copyfile(mllr, staging / MLLR_FILE)
        (staging / MANIFEST_FILE).write_text(
            json.dumps(manifest, indent=2) + "\n", encoding="utf-8"
        )
        if target.exists():
            shutil.rmtree(target)
        staging.replace(target)
    used = [os.fspath(r.path) for u, r in zip(ids, recordings, strict=True) if u not in ignored]
    skipped = [os.fspath(r.path) for u, r in zip(ids, recordings, strict=True) if u in ignored]
    return Enrolment(
        speaker=speaker,
        mllr_path=target / MLLR_FILE,
        used=used,
        ignored=skipped,
        speech_seconds=manifest["speech_seconds"],
        adapt_seconds=manifest["adapt_seconds"],
        adapt_cpu_seconds=manifest["adapt_cpu_seconds"],
    )
