"""Cut streaming text into pieces to synthesise: sentences, and clauses of a long first one.

``TextSplitter`` is push-style: feed it text as it arrives (an LLM's tokens, or a whole
reply at once) with ``add_chunk()``, call ``finish()`` at the end, and it hands back each
piece as soon as the piece is complete, so synthesis of the first piece starts before the
rest of the text has arrived. ``split_text`` and ``split_text_async`` wrap it as sync and
async generators.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass

from .base import clean_text

#: Abbreviations whose full stop does not end a sentence (lower case, without the dot).
ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "prof",
        "sr",
        "jr",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "no",
        "approx",
        "dept",
        "fig",
        "min",
        "max",
        "mt",
        "ave",
        "rd",
    }
)
_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"')\]\u201d\u2019]*(?=\s)")
_CLAUSE_END = re.compile(r"[,;:\u2013\u2014]+(?=\s)")
_WORD_BEFORE = re.compile(r"(\S+?)[.!?\u2026]*$")


@dataclass(frozen=True, slots=True)
class SplitterSettings:
    """How text is cut. All counts are in words or characters."""

    #: A first sentence longer than this many words is cut at a clause mark.
    long_sentence_words: int = 10
    #: A first clause must hold at least this many words to be cut off.
    min_clause_words: int = 4
    #: A piece without any boundary is cut (at a space) once it reaches this many characters.
    max_chars: int = 300


class TextSplitter:
    """Push text in, get complete pieces out."""

    def __init__(self, settings: SplitterSettings | None = None) -> None:
        self.settings = settings or SplitterSettings()
        self._buffer = ""
        self._pieces_out = 0

    def add_chunk(self, text: str) -> list[str]:
        """Add more text; return the pieces it completed (possibly none)."""
        return list(self.feed(text))

    def feed(self, text: str) -> Iterator[str]:
        """Like ``add_chunk``, but hand each piece over as soon as it is cut.

        Consume the iterator fully before feeding more text.
        """
        self._buffer += _clean_keep_newlines(text)
        return self._drain(final=False)

    def finish(self) -> list[str]:
        """The text has ended: return the remaining pieces and start afresh."""
        pieces = list(self._drain(final=True))
        rest = self._buffer.strip()
        if rest:
            pieces.append(_flatten(rest))
        self._buffer = ""
        self._pieces_out = 0
        return pieces

    # --- internals -------------------------------------------------------------------

    def _drain(self, final: bool) -> Iterator[str]:
        while True:
            cut = self._next_cut(final)
            if cut is None:
                return
            piece = _flatten(self._buffer[:cut].strip())
            self._buffer = self._buffer[cut:].lstrip()
            if piece:
                self._pieces_out += 1
                yield piece

    def _next_cut(self, final: bool) -> int | None:
        """Index just after the next piece in the buffer, or None if it is not complete."""
        text = self._buffer
        sentence = self._sentence_end(text)
        if self._pieces_out == 0:
            clause = self._first_clause_end(text, sentence, final)
            if clause is not None:
                return clause
        if sentence is not None:
            return sentence
        if len(text) >= self.settings.max_chars:
            space = text.rfind(" ", 0, self.settings.max_chars)
            return space if space > 0 else self.settings.max_chars
        return None

    def _sentence_end(self, text: str) -> int | None:
        newline = text.find("\n")
        for match in _SENTENCE_END.finditer(text):
            if newline >= 0 and match.start() > newline:
                break
            if match.group().startswith(".") and _is_abbreviation(text[: match.start()]):
                continue
            return match.end()
        return newline + 1 if newline >= 0 else None

    def _first_clause_end(self, text: str, sentence: int | None, final: bool) -> int | None:
        """Cut a long first sentence at its first clause mark after enough words."""
        s = self.settings
        span = text[:sentence] if sentence is not None else text
        complete = sentence is not None or final
        if len(span.split()) <= s.long_sentence_words:
            return None
        for match in _CLAUSE_END.finditer(span):
            before = span[: match.end()]
            after = span[match.end() :]
            if len(before.split()) >= s.min_clause_words and (
                not complete or len(after.split()) >= s.min_clause_words
            ):
                return match.end()
        return None


def split_text(chunks: Iterable[str], settings: SplitterSettings | None = None) -> Iterator[str]:
    """Yield pieces from text arriving in chunks (sync generator)."""
    splitter = TextSplitter(settings)
    for chunk in chunks:
        yield from splitter.feed(chunk)
    yield from splitter.finish()


async def split_text_async(
    chunks: AsyncIterable[str], settings: SplitterSettings | None = None
) -> AsyncIterator[str]:
    """Yield pieces from text arriving in chunks (async generator)."""
    splitter = TextSplitter(settings)
    async for chunk in chunks:
        for piece in splitter.add_chunk(chunk):
            yield piece
    for piece in splitter.finish():
        yield piece


def _clean_keep_newlines(text: str) -> str:
    return "\n".join(clean_text(line) for line in text.replace("\r\n", "\n").split("\n"))


def _flatten(piece: str) -> str:
    return " ".join(piece.split())


def _is_abbreviation(before: str) -> bool:
    match = _WORD_BEFORE.search(before)
    if match is None:
        return False
    word = match.group(1).lower().lstrip("(\"'")
    return word in ABBREVIATIONS or (len(word) == 1 and word.isalpha() and word != "i")
