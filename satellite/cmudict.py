"""A CMUdict-format pronunciation dictionary searched where it lies, not loaded.

``word PH ON ES`` lines, alternate pronunciations as ``word(2)``. The file pocketsphinx
ships (``cmudict-en-us.dict``, 135k lines, 3.2 MB) is sorted by word, so a word is found
by binary search in the memory-mapped file: the pages it touches are the page cache's
(shared, clean, given back under pressure), and there is no Python object per word. A
set of its words and a dict of syllable counts cost 11.6 MB and 10.3 MB of RSS for good
(issue 16), and 0.8 s of start-up.

A file that is not sorted (lines by the word before ``(``, bytewise) is read into memory
sorted, so any file gives the same answers.
"""

from __future__ import annotations

import functools
import mmap
from collections.abc import Iterator
from pathlib import Path


def _key(line: bytes) -> bytes:
    """The word of a line, without an alternate's ``(n)``."""
    return line.split(b" ", 1)[0].split(b"(", 1)[0]


#: Answers of ``in`` remembered, at most.
KNOWN_KEPT = 4096


class Pronunciations:
    """Words of a sorted CMUdict-format buffer and their pronunciations."""

    def __init__(self, data: bytes | mmap.mmap, words: int) -> None:
        """``data``: lines sorted by word; ``words``: how many distinct words it holds."""
        self._data = data
        self._words = words
        #: Words asked about lately (a grammar asks about its few hundred words
        #: thousands of times; a search takes ~40 us on one x86 core).
        self._known: dict[str, bool] = {}

    @classmethod
    def open(cls, path: Path | str) -> Pronunciations:
        """Map the file (or, unsorted, read it sorted); checked in one pass, no copy."""
        with open(path, "rb") as handle:
            try:
                data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file cannot be mapped
                return cls(b"", 0)
        book = cls(data, 0)
        previous = b""
        for line in book._lines():
            key = _key(line)
            if not key:
                continue
            if key < previous:
                return cls._sorted(data)
            if key != previous:
                book._words += 1
            previous = key
        if hasattr(mmap, "MADV_DONTNEED"):
            data.madvise(mmap.MADV_DONTNEED)  # the check read every page: not ours to keep
        return book

    @classmethod
    def _sorted(cls, data: bytes | mmap.mmap) -> Pronunciations:
        lines = sorted((ln for ln in bytes(data).splitlines() if _key(ln)), key=_key)
        return cls(b"\n".join(lines) + b"\n", len({_key(ln) for ln in lines}))

    @property
    def in_place(self) -> bool:
        """Whether the file is searched where it lies (it was sorted), not copied."""
        return isinstance(self._data, mmap.mmap)

    def __len__(self) -> int:
        return self._words

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        known = self._known.get(word)
        if known is None:
            if len(self._known) >= KNOWN_KEPT:
                self._known.clear()
            known = self._known[word] = bool(self.lines(word))
        return known

    def __iter__(self) -> Iterator[str]:
        """Each word once, in order."""
        previous = b""
        for line in self._lines():
            key = _key(line)
            if key and key != previous:
                yield key.decode("utf-8", errors="replace")
                previous = key

    def _lines(self, position: int = 0) -> Iterator[bytes]:
        data = self._data
        end = len(data)
        while position < end:
            stop = data.find(b"\n", position)
            stop = end if stop < 0 else stop
            yield data[position:stop]
            position = stop + 1

    def lines(self, word: str) -> list[bytes]:
        """Every line of ``word`` (its first pronunciation and alternates), file order."""
        target = word.encode("utf-8", errors="replace")
        if not target or b" " in target:
            return []
        data = self._data
        low, high = 0, len(data)
        while low < high:  # the first line whose word is not below ``target``
            middle = (low + high) // 2
            start = data.rfind(b"\n", 0, middle) + 1
            stop = data.find(b"\n", start)
            stop = len(data) if stop < 0 else stop
            if _key(data[start:stop]) < target:
                low = stop + 1
            else:
                high = start
        found = []
        for line in self._lines(low):
            if _key(line) != target:
                break
            found.append(line)
        return found

    def phones(self, word: str) -> list[str] | None:
        """The phones of ``word``'s own line (not an alternate's), or None without one."""
        for line in self.lines(word):
            head, _, rest = line.decode("utf-8", errors="replace").partition(" ")
            if not head.endswith(")"):
                return rest.split() or None
        return None


@functools.lru_cache(maxsize=4)
def pronunciations(path: str) -> Pronunciations:
    """The dictionary at ``path``, opened once per process."""
    return Pronunciations.open(path)
