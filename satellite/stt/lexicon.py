"""Words the recognizer can say: the pronunciation dictionary and number words."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path

from ..cmudict import Pronunciations, pronunciations
from ..errors import MissingDependencyError, SatelliteError
from ..files import replace_atomically


def pocketsphinx_model_dir(language: str) -> Path:
    """The model folder the ``pocketsphinx`` wheel ships (en-us only)."""
    try:
        import pocketsphinx  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("pocketsphinx", None, "Speech recognition") from err
    if language.split("_", maxsplit=1)[0] != "en":
        raise SatelliteError(
            f"The pocketsphinx wheel ships an English (en-us) model only; language "
            f"{language!r} needs another STT engine. Fix: set satellite.language: en, or "
            f"stt.engine to one you have a model for"
        )
    return Path(pocketsphinx.get_model_path()) / "en-us"


def dictionary_words(dict_path: str) -> Pronunciations:
    """Words in a CMUdict-format file (alternate pronunciations folded): ``word in``
    searches the file in place, ``for word in`` walks it."""
    return pronunciations(dict_path)


def grammar_dictionary(words: Iterable[str], source: str, path: Path) -> Path:
    """A pronunciation dictionary of ``words`` only (every pronunciation of each), taken
    from ``source`` and written to ``path`` unless it is there already.

    A decoder loads its dictionary whole: CMUdict's 135,000 words cost about 20 MB and
    80 ms per decoder, the few hundred words of a grammar next to nothing.
    """
    if path.is_file():
        return path
    wanted = set(words)
    with open(source, encoding="utf-8") as handle:
        lines = [ln for ln in handle if ln.split(" ", 1)[0].split("(", 1)[0] in wanted]
    replace_atomically(path, "".join(lines))
    return path


def default_dictionary(language: str) -> str:
    """Path of the CMUdict that ships with pocketsphinx."""
    return os.fspath(pocketsphinx_model_dir(language) / "cmudict-en-us.dict")


@functools.lru_cache(maxsize=8)
def _rbnf(language: str) -> object:
    from hassil.numbers import get_rbnf_engine  # noqa: PLC0415

    return get_rbnf_engine(language.split("_", maxsplit=1)[0])


def number_words(number: int, language: str = "en") -> list[str]:
    """A number as spoken words: 55 -> ['fifty', 'five'] (hyphens become spaces)."""
    engine = _rbnf(language)
    text: str = engine.format_number(number).text  # type: ignore[attr-defined]
    return text.replace("-", " ").replace(",", " ").split()
