"""Syllable counts of words: CMUdict vowel phones, with an orthographic fallback.

The pronunciation dictionary is the one the ``pocketsphinx`` package ships for its
en-us model (``cmudict-en-us.dict``, ~135k words, no stress marks): a word has one
syllable per vowel phone. Words it lacks (names, misspellings, digits) are counted
from their spelling by :func:`orthographic_syllables`, which is right for most words
and off by one for some.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..cmudict import Pronunciations, pronunciations

_LOGGER = logging.getLogger(__name__)

#: ARPAbet vowels (CMUdict without stress digits): one syllable each.
VOWEL_PHONES = frozenset(
    {"AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"}
)
#: Tokens speech recognisers emit that are not words (silence, noise, sentence marks).
NON_WORDS = frozenset({"<s>", "</s>", "<sil>", "sil", "[noise]", "<unk>", "[laughter]"})
_DIGIT_SYLLABLES = {"0": 2, "1": 1, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "7": 2, "8": 1, "9": 1}
_WORD_CHARS = re.compile(r"[^a-z0-9']+")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


def normalise(word: str) -> str:
    """Lower-case, strip recogniser decorations (``word(2)``) and punctuation."""
    word = word.strip().lower()
    word = re.sub(r"\(\d+\)$", "", word)
    return _WORD_CHARS.sub("", word).strip("'")


def is_filler(token: str) -> bool:
    """True for tokens that are not words: silences, noises, ``+breath+``-style marks."""
    low = token.strip().lower()
    return (
        not low
        or low in NON_WORDS
        or (low.startswith("+") and low.endswith("+"))
        or (low.startswith("[") and low.endswith("]"))
    )


def orthographic_syllables(word: str) -> int:
    """Estimate the syllables of a written English word from its vowel letters."""
    word = normalise(word).replace("'", "")
    if not word:
        return 0
    if word.isdigit():
        return sum(_DIGIT_SYLLABLES[d] for d in word)
    word = re.sub(r"\d", "", word)
    count = len(_VOWEL_GROUPS.findall(word))
    if word.endswith("e") and not word.endswith(("le", "ee", "ye")) and count > 1:
        count -= 1  # silent final e: "make", "time"
    elif word.endswith("le") and len(word) > 2 and word[-3] in "aeiouy" and count > 1:
        count -= 1  # "male", "pole"
    if (
        word.endswith(("es", "ed"))
        and count > 1
        and not word.endswith(("ted", "ded", "ses", "zes", "ches", "shes", "ges"))
    ):
        count -= 1  # "makes", "named"
    count += len(re.findall(r"(?<![cstgaeiou])ia|io$|(?<![qg])u[ao]", word))  # "piano", "radio"
    return max(1, count)


class _CountsInPlace(Mapping[str, int]):
    """Syllable counts of a sorted, lower-case CMUdict searched in place (no dict of
    126k words: 10 MB of RSS kept for good)."""

    def __init__(self, book: Pronunciations) -> None:
        self._book = book

    def __getitem__(self, word: str) -> int:
        phones = self._book.phones(word)
        if phones is None:
            raise KeyError(word)
        return sum(1 for p in phones if p.rstrip("012") in VOWEL_PHONES)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._book.phones(word) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._book)

    def __len__(self) -> int:
        return len(self._book)


class SyllableDictionary:
    """Word -> syllable count, read from a CMUdict-format file (``word PH ON ES``)."""

    def __init__(self, counts: Mapping[str, int]) -> None:
        self._counts = counts

    @classmethod
    def in_place(cls, path: Path) -> SyllableDictionary:
        """Counts of a CMUdict searched in place: the same as ``from_file`` gives for a
        file of lower-case words, as CMUdict is."""
        return cls(_CountsInPlace(pronunciations(str(path))))

    @classmethod
    def from_file(cls, path: Path) -> SyllableDictionary:
        """Parse a CMUdict file; alternate pronunciations (``word(2)``) are skipped."""
        counts: dict[str, int] = {}
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) < 2 or parts[0].endswith(")") or parts[0].startswith(";;;"):
                    continue
                counts[parts[0].lower()] = sum(
                    1 for p in parts[1:] if p.rstrip("012") in VOWEL_PHONES
                )
        return cls(counts)

    def __len__(self) -> int:
        return len(self._counts)

    def lookup(self, word: str) -> int | None:
        """Syllables of ``word`` from the dictionary, or None when it is not there."""
        key = normalise(word)
        if key in self._counts:
            return self._counts[key]
        if "-" in word:
            parts = [self._counts.get(normalise(p)) for p in word.split("-") if normalise(p)]
            if parts and all(p is not None for p in parts):
                return sum(p for p in parts if p is not None)
        return None

    def count(self, word: str) -> tuple[int, bool]:
        """Syllables of ``word`` and whether the dictionary knew it."""
        if is_filler(word):
            return 0, True
        known = self.lookup(word)
        if known is not None:
            return known, True
        return sum(orthographic_syllables(p) for p in word.split("-") if normalise(p)), False


def cmudict_path() -> Path | None:
    """Where the pocketsphinx package keeps its en-us CMUdict, or None if not installed."""
    try:
        from pocketsphinx import get_model_path  # noqa: PLC0415
    except ImportError:
        return None
    path = Path(get_model_path()) / "en-us" / "cmudict-en-us.dict"
    return path if path.is_file() else None


@functools.lru_cache(maxsize=1)
def default_dictionary() -> SyllableDictionary:
    """The shared CMUdict (searched in place); empty, with a warning, without pocketsphinx."""
    path = cmudict_path()
    if path is None:
        _LOGGER.warning(
            "No CMUdict found (pip install pocketsphinx): syllables of recognised "
            "words will be estimated from their spelling"
        )
        return SyllableDictionary({})
    return SyllableDictionary.in_place(path)
