"""Recorded human speech for the tests and benches: people, not synthesizers.

Two packages ship recordings of real people:

- pocketsphinx's source distribution on PyPI (its test data): a LibriVox reader (five
  sentences of *Sense and Sensibility*), AN4 utterances ("go forward ten meters", card
  names, numbers), a TIDIGITS digit string, two short takes, a telephone conversation
  (20 s, two people, laughter at its end), about 90 s in all;
- alsa-utils (Debian, installed by scripts/bootstrap.sh): speaker-test's spoken channel
  names ("front left", ...), one woman, 8 prompts.

None of it is a command or holds the wake word: it is out-of-domain speech, what the
satellite must never act on. The sdist (34 MB) is fetched once from PyPI (pinned by its
SHA-256) and only its recordings are kept, in ``~/.cache/pocket-satellite/human-speech``.

Run ``python -m tests.human_speech`` to fetch it (scripts/test.sh does before the tests)
and list what is there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from satellite.actions import AnswerDue
from satellite.config import Config
from satellite.nlu.help_answers import HELP as CALL
from satellite.nlu.intents import DEVICE_ACTION_INTENTS
from satellite.understanding import Understanding
from tests import corpus, robustness, synth
from tests.synth import RATE, Float

SDIST = "pocketsphinx-5.1.1"
SDIST_URL = (
    "https://files.pythonhosted.org/packages/61/e7/"
    "13e0e787ff467218de880310d79cba14424f13b87171ac44af0bde1e428c/pocketsphinx-5.1.1.tar.gz"
)
SDIST_SHA256 = "675778b309a22dfc9b7d37f7621976bba491d2a5f8c59696bd77fd6d07271355"
CACHE = Path(os.environ.get("POCKET_CACHE", "~/.cache/pocket-satellite")).expanduser()
HUMAN_DIR = CACHE / "human-speech" / SDIST
ALSA_PROMPTS = Path("/usr/share/sounds/alsa")

#: The sdist's recordings of people (its path under test/), who, and what they say
#: (None: not transcribed there). Raw files are 16 kHz 16-bit mono.
_SDIST_TAKES: tuple[tuple[str, str, str | None], ...] = (
    *(
        (f"data/librivox/sense_and_sensibility_01_austen_64kb-{n}.wav", "librivox", text)
        for n, text in (
            (
                "0870",
                "and mister john dashwood had then leisure to consider how much there "
                "might be prudently in his power to do for them",
            ),
            ("0880", "he was not an ill disposed young man"),
            ("0890", "unless to be rather cold hearted and rather selfish is to be ill disposed"),
            (
                "0920",
                "had he married a more a amiable woman he might have been made still "
                "more respectable than he was",
            ),
            ("0930", "he might even have been made amiable himself"),
        )
    ),
    ("data/cards/001.wav", "an4 cards", "ten of clubs"),
    ("data/cards/002.wav", "an4 cards", "four queen of clubs"),
    ("data/cards/003.wav", "an4 cards", "seven of clubs"),
    ("data/cards/004.wav", "an4 cards", "five five"),
    ("data/cards/005.wav", "an4 cards", "eight of spades four of clubs seven of hearts"),
    ("data/goforward.raw", "an4", "go forward ten meters"),
    ("data/numbers.raw", "an4", None),
    ("data/something.raw", "an4", None),
    ("data/tidigits/dhd.2934z.raw", "tidigits", "two nine three four zero"),
    ("data/forever/input_2_16k.wav", "forever", None),
    ("data/forever/input_4_16k.wav", "forever", None),
    ("data/vad/leak-test.wav", "vad", None),
    ("regression/chan3.wav", "conversation", None),
)
_ALSA_TAKES = (
    "Front_Left",
    "Front_Center",
    "Front_Right",
    "Rear_Left",
    "Rear_Center",
    "Rear_Right",
    "Side_Left",
    "Side_Right",
)


@dataclass(frozen=True)
class Recording:
    """One recording of a person: float samples on a 16-bit scale at 16 kHz."""

    name: str
    #: Where it comes from (one speaker or one corpus of few): figures are per source.
    source: str
    text: str | None
    audio: Float

    @property
    def seconds(self) -> float:
        return len(self.audio) / RATE


class NotFetchedError(RuntimeError):
    """The recordings could not be fetched (no network, or PyPI's file changed)."""


def fetch(directory: Path = HUMAN_DIR) -> Path:
    """The sdist's recordings, fetched and unpacked into ``directory`` if not there yet."""
    if (directory / "complete").exists():
        return directory
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / f"{SDIST}.tar.gz"
        try:
            with urllib.request.urlopen(SDIST_URL, timeout=120) as reply, archive.open("wb") as f:
                shutil.copyfileobj(reply, f)
        except OSError as err:
            raise NotFetchedError(
                f"could not fetch {SDIST_URL} ({err}): the human-speech recordings need PyPI; "
                f"or unpack that sdist's test/ files into {directory} yourself"
            ) from err
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            raise NotFetchedError(f"{SDIST_URL} has SHA-256 {digest}, expected {SDIST_SHA256}")
        wanted = {f"{SDIST}/test/{path}": path for path, _, _ in _SDIST_TAKES}
        staging = Path(tmp) / "staging"
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.name in wanted and member.isfile():
                    source = tar.extractfile(member)
                    assert source is not None
                    target = staging / wanted[member.name]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(source.read())
        missing = [path for path in wanted.values() if not (staging / path).exists()]
        if missing:
            raise NotFetchedError(f"{SDIST} lacks {missing}")
        (staging / "complete").write_text(SDIST_SHA256 + "\n")
        directory.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(directory, ignore_errors=True)
        shutil.move(str(staging), directory)
    return directory


def recordings(directory: Path = HUMAN_DIR) -> list[Recording]:
    """Every recording of a person (fetching the sdist's if needed; alsa-utils' prompts
    where installed)."""
    root = fetch(directory)
    found = [
        Recording(Path(path).stem, source, text, _load(root / path))
        for path, source, text in _SDIST_TAKES
    ]
    for name in _ALSA_TAKES:
        path = ALSA_PROMPTS / f"{name}.wav"
        if path.exists():
            found.append(
                Recording(name, "alsa prompts", name.replace("_", " ").lower(), _load(path))
            )
    return found


def _load(path: Path) -> Float:
    """``path`` (a 16-bit mono WAV at any rate, or raw 16 kHz) as 16 kHz float samples
    on a 16-bit scale."""
    if path.suffix == ".raw":
        return np.frombuffer(path.read_bytes(), dtype="<i2").astype(np.float32)
    return synth.wav_to_float(path.read_bytes())


#: Room heard before and after a recording, s.
LEAD_SECONDS = 0.5
TAIL_SECONDS = 1.5
#: What the satellite made of an utterance: acted on at once, asked about first (the
#: dialogue asks once more, or "Do you need help?"), or not understood.
AT_ONCE, ASKED, NOT_UNDERSTOOD = "at_once", "asked", "not_understood"
#: What an intent would do: switch a device, call for help, anything else.
DEVICE, HELP, OTHER = "device", "help", "other"


def heard_in(
    take: Recording,
    room: corpus.Room,
    seed: int,
    continuous: bool,
    understanding: Understanding,
    config: Config | None = None,
) -> robustness.Heard:
    """``take`` in ``room`` (room before and after it, over the quiet floor of the command
    scenes) replayed through the satellite (``continuous``: listening on, no wake word
    needed, as in the follow-on window)."""
    audio = np.concatenate([synth.silence(LEAD_SECONDS), take.audio, synth.silence(TAIL_SECONDS)])
    heard = robustness.on_floor(audio, room, seed, take.audio)
    return robustness.replay(config or Config(), heard, continuous, understanding)


def outcome(answer: AnswerDue) -> tuple[str, str | None]:
    """How an answer was given (``AT_ONCE``, ``ASKED``, ``NOT_UNDERSTOOD``) and what it
    would do (``DEVICE``, ``HELP``, ``OTHER``; None when not understood)."""
    intent = answer.result.intent
    if intent is None:
        return NOT_UNDERSTOOD, None
    kind = DEVICE if intent in DEVICE_ACTION_INTENTS else HELP if intent == CALL else OTHER
    return (ASKED if answer.doubtful else AT_ONCE), kind


if __name__ == "__main__":
    takes = recordings()
    for take in takes:
        print(f"{take.source:14} {take.name:45} {take.seconds:5.1f} s  {take.text or ''}")
    print(f"{len(takes)} recordings, {sum(t.seconds for t in takes):.1f} s, in {HUMAN_DIR}")
