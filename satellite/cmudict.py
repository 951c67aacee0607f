"""A CMUdict-format pronunciation dictionary searched where it lies, not loaded.

``word PH ON ES`` lines, alternate pronunciations as ``word(2)``. The file pocketsphinx
ships (``cmudict-en-us.dict``, 135k lines, 3.2 MB) is sorted by word. Opening it reads
it once and keeps the word and offset of every ``BLOCK_LINES``-th line (~2,000 of them,
~0.2 MB); a word is then found in its block by one positional read of ~1.5 kB. A set of
its words and a dict of syllable counts cost 11.6 MB and 10.3 MB of RSS for good (issue
16) and 0.8 s of start-up; mapping the file instead left every page a search touched
(and the kernel's neighbours of it) counted in RSS: 2 MB after twenty words.

A file that is not sorted (lines by the word before ``(``, bytewise) is read into memory
sorted, so any file gives the same answers.
"""

from __future__ import annotations

import bisect
import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

#: Lines per block of the index: a search reads one block (or two, at its end).
BLOCK_LINES = 64
#: Bytes read at a time when walking the lines, and when searching a block.
READ_BYTES = 64 * 1024
SEARCH_BYTES = 2048
#: Answers of ``in`` remembered, at most.
KNOWN_KEPT = 4096


def _key(line: bytes) -> bytes:
    """The word of a line, without an alternate's ``(n)``."""
    return line.split(b" ", 1)[0].split(b"(", 1)[0]


class Pronunciations:
    """Words of a sorted CMUdict-format text and their pronunciations."""

    def __init__(self, read: Callable[[int, int], bytes], size: int) -> None:
        """``read(offset, length)``: bytes of the text, whose lines are sorted by word;
        ``size``: its length. Indexes it (one pass)."""
        self._read = read
        self._size = size
        #: The word and offset of every BLOCK_LINES-th line.
        self._keys: list[bytes] = []
        self._offsets: list[int] = []
        self._words = 0
        #: Whether the lines are sorted (else the index is incomplete: do not search).
        self.sorted = True
        #: Whether the file is searched where it lies, not copied (``open``).
        self.in_place = False
        #: Words asked about lately (a grammar asks about its few hundred words
        #: thousands of times).
        self._known: dict[str, bool] = {}
        previous = b""
        for index, (offset, line) in enumerate(self._lines(0)):
            key = _key(line)
            if index % BLOCK_LINES == 0:
                self._keys.append(key)
                self._offsets.append(offset)
            if not key:
                continue
            if key < previous:
                self.sorted = False
                return
            if key != previous:
                self._words += 1
            previous = key

    @classmethod
    def open(cls, path: Path | str) -> Pronunciations:
        """The file searched in place (read sorted into memory if it is not sorted)."""
        reader = _FileReader(path)
        book = cls(reader, reader.size)
        if book.sorted:
            book.in_place = True
            return book
        del book, reader
        with open(path, "rb") as handle:
            lines = sorted((ln for ln in handle.read().splitlines() if _key(ln)), key=_key)
        text = b"\n".join(lines) + b"\n"
        return cls(lambda offset, length: text[offset : offset + length], len(text))

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
        for _, line in self._lines(0):
            key = _key(line)
            if key and key != previous:
                yield key.decode("utf-8", errors="replace")
                previous = key

    def _lines(self, position: int, chunk: int = READ_BYTES) -> Iterator[tuple[int, bytes]]:
        """(offset, line) from ``position`` (a line's start) to the end, read ``chunk``
        bytes at a time."""
        start = position
        buffer = b""
        while position < self._size:
            data = self._read(position, chunk)
            if not data:
                break
            position += len(data)
            *complete, buffer = (buffer + data).split(b"\n")
            for line in complete:
                yield start, line
                start += len(line) + 1
        if buffer:
            yield start, buffer

    def lines(self, word: str) -> list[bytes]:
        """Every line of ``word`` (its first pronunciation and alternates), file order."""
        target = word.encode("utf-8", errors="replace")
        if not target or b" " in target or not self._offsets or not self.sorted:
            return []
        # the last block that starts below the word: its lines may begin in it
        block = max(0, bisect.bisect_left(self._keys, target) - 1)
        found = []
        for _, line in self._lines(self._offsets[block], SEARCH_BYTES):
            key = _key(line)
            if key > target:
                break
            if key == target:
                found.append(line)
        return found

    def phones(self, word: str) -> list[str] | None:
        """The phones of ``word``'s own line (not an alternate's), or None without one."""
        for line in self.lines(word):
            head, _, rest = line.decode("utf-8", errors="replace").partition(" ")
            if not head.endswith(")"):
                return rest.split() or None
        return None


class _FileReader:
    """Positional reads of a file kept open (no mapping: nothing counted in RSS)."""

    def __init__(self, path: Path | str) -> None:
        self._descriptor = os.open(path, os.O_RDONLY)
        self.size = os.fstat(self._descriptor).st_size

    def __call__(self, offset: int, length: int) -> bytes:
        return os.pread(self._descriptor, length, offset)

    def __del__(self) -> None:
        os.close(self._descriptor)


@functools.lru_cache(maxsize=4)
def pronunciations(path: str) -> Pronunciations:
    """The dictionary at ``path``, opened once per process."""
    return Pronunciations.open(path)
