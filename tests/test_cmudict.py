"""The pronunciation dictionary searched in place (satellite/cmudict.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from satellite.cmudict import Pronunciations
from satellite.prosody.syllables import SyllableDictionary, cmudict_path
from satellite.stt.lexicon import default_dictionary

SORTED = """'bout B AW T
a AH
a(2) EY
hello HH AH L OW
hello(2) HH EH L OW
kitchen K IH CH AH N
light L AY T
lights L AY T S
"""


def _book(tmp_path: Path, text: str) -> Pronunciations:
    path = tmp_path / "words.dict"
    path.write_text(text, encoding="utf-8")
    return Pronunciations.open(path)


def test_a_sorted_file_is_searched_in_place(tmp_path: Path) -> None:
    book = _book(tmp_path, SORTED)
    assert book.in_place
    assert len(book) == 6
    assert list(book) == ["'bout", "a", "hello", "kitchen", "light", "lights"]
    for word in book:
        assert word in book
    assert "hell" not in book and "lightsx" not in book and "" not in book
    assert "hello(2)" not in book and "a AH" not in book
    assert book.lines("hello") == [b"hello HH AH L OW", b"hello(2) HH EH L OW"]
    assert book.phones("a") == ["AH"]
    assert book.phones("zebra") is None


def test_an_unsorted_file_gives_the_same_answers(tmp_path: Path) -> None:
    lines = SORTED.splitlines()
    book = _book(tmp_path, "\n".join(reversed(lines[:3])) + "\n" + "\n".join(lines[3:]))
    assert not book.in_place
    assert list(book) == list(_book(tmp_path, SORTED))
    assert book.phones("a") == ["AH"]  # its own line, not the alternate before it
    assert book.lines("a") == [b"a(2) EY", b"a AH"]  # file order


def test_an_empty_file(tmp_path: Path) -> None:
    book = _book(tmp_path, "")
    assert len(book) == 0 and "a" not in book and list(book) == []


@pytest.mark.skipif(cmudict_path() is None, reason="pocketsphinx is not installed")
def test_the_shipped_cmudict_in_place_counts_as_the_dict_did() -> None:
    path = cmudict_path()
    assert path is not None
    book = Pronunciations.open(default_dictionary("en"))
    assert book.in_place  # pocketsphinx ships it sorted: nothing is loaded
    loaded = SyllableDictionary.from_file(path)
    in_place = SyllableDictionary.in_place(path)
    assert len(in_place) == len(loaded) == len(book)
    for word in ("hello", "kitchen", "everybody", "twenty-one", "Nurse", "zzzq", "x-ray"):
        assert in_place.count(word) == loaded.count(word)
