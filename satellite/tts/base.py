"""What every speech synthesiser offers, and the errors they raise."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

from ..audio.chunk import AudioChunk
from ..errors import SatelliteError

#: C0 and C1 control characters, DEL, and Unicode line/paragraph separators.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_SPACES = re.compile(r"[ \u00a0]{2,}")


class TtsError(SatelliteError):
    """Speech synthesis failed."""


class UnknownVoiceError(TtsError):
    """The voice asked for does not exist; the message names some that do."""


class TtsEngine(Protocol):
    """A speech synthesiser.

    ``synthesize`` yields audio as it is produced. Stopping the iteration (``close()`` on
    the iterator, or simply not asking for more) cancels the synthesis between chunks.
    """

    name: str

    def synthesize(self, text: str, voice: str | None = None) -> Iterator[AudioChunk]:
        """Speak ``text`` (one sentence or a few) with ``voice`` (None: the default)."""

    def voices(self) -> list[str]:
        """Names of the voices this engine can use."""

    def close(self) -> None:
        """Release the engine."""


def clean_text(text: str) -> str:
    """Replace control characters with spaces and collapse runs of spaces."""
    return _SPACES.sub(" ", _CONTROL.sub(" ", text))
