"""Grammars kept on disk by what they are built from, so a start need not build one.

Building the grammar of HA's templates takes ~0.7 s on one x86 core and leaves ~12 MB of
RSS behind for good (its peak is ~20 MB of short-lived Python objects, and the freed
pieces stay scattered over pymalloc's arenas; issue 16). The same inputs give the same
grammar, so the grammar is written beside its FSG file under a name made from the
inputs: the active intents, names and areas, the package versions of the templates and
number words, the sources that turn them into a grammar, and the pronunciation
dictionary. Read back, it is the grammar the build gives (its FSG's digest is checked).

Every use touches the grammar's files, and after each new build only the
``KEEP_GRAMMARS`` most recently used grammars stay (a home whose names change often
would otherwise fill an SD card with old ones). A grammar pruned under another process
only costs that process a build: a missing file reads as "not built".
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
from pathlib import Path

from ..files import replace_atomically, touch
from ..nlu import intents as nlu_intents
from ..nlu.intents import IntentSet
from . import fsg, grammar, lexicon
from .fsg import Grammar

_LOGGER = logging.getLogger(__name__)
#: Packages whose data or code a grammar is built from.
_PACKAGES = ("hassil", "home-assistant-intents", "unicode-rbnf")
#: Grammars kept in the cache, the most recently used.
KEEP_GRAMMARS = 16
#: Sources that turn the templates into a grammar (this module's own included).
_SOURCES = (grammar.__file__, fsg.__file__, lexicon.__file__, nlu_intents.__file__, __file__)


def inputs_digest(intent_set: IntentSet, dictionary: str) -> str:
    """A stable id of everything the grammar of ``intent_set`` is built from."""
    digest = hashlib.sha256()
    key = (
        intent_set.language,
        intent_set.names,
        intent_set.entities,
        intent_set.areas,
        intent_set.area,
    )
    digest.update(repr(key).encode("utf-8"))
    for package in _PACKAGES:
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"\0{package}={version}".encode())
    care = Path(nlu_intents.__file__).parent / f"care_{intent_set.language.split('_')[0]}.yaml"
    for source in (*_SOURCES, care):
        digest.update(b"\0" + (Path(source).read_bytes() if Path(source).is_file() else b""))
    stat = os.stat(dictionary)
    digest.update(f"\0{dictionary}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _path(cache_dir: Path, inputs: str) -> Path:
    return cache_dir / f"built-{inputs}.json"


def load_built(cache_dir: Path, inputs: str) -> Grammar | None:
    """The grammar built before from these inputs, or None (not built, or unreadable)."""
    path = _path(cache_dir, inputs)
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
        arcs: list[tuple[int, int, str | None]] = []
        fsg_path = cache_dir / str(meta["fsg"])
        with fsg_path.open(encoding="utf-8") as handle:
            for line in handle:
                parts = line.split()
                if parts and parts[0] == "TRANSITION":
                    word = parts[4] if len(parts) > 4 else None
                    arcs.append((int(parts[1]), int(parts[2]), word))
        built = Grammar(
            int(meta["states"]),
            int(meta["start"]),
            int(meta["final"]),
            arcs,
            set(meta["words"]),
            set(meta["oov"]),
            int(meta["graph_arcs"]),
            {str(k): int(v) for k, v in meta["list_sizes"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
        _LOGGER.warning("Grammar cache %s unreadable (%s): building it again", path, err)
        return None
    if fsg_path.name != f"commands-{built.digest}.fsg":
        _LOGGER.warning("Grammar cache %s does not match its FSG: building it again", path)
        return None
    touch(path)
    touch(fsg_path)
    return built


def prune(cache_dir: Path, keep: int = KEEP_GRAMMARS) -> list[str]:
    """Delete all but the ``keep`` most recently used grammars: their FSG files, the
    pronunciations beside them and the notes that name them. Returns the names deleted."""

    def used(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    grammars = sorted(cache_dir.glob("commands-*.fsg"), key=used, reverse=True)
    kept = {path.name for path in grammars[:keep]}
    gone = [p for g in grammars[keep:] for p in (g, g.with_suffix(".dict"))]
    for note in cache_dir.glob("built-*.json"):
        try:
            named = str(json.loads(note.read_text(encoding="utf-8"))["fsg"])
        except (OSError, ValueError, KeyError, TypeError):
            named = ""
        if named not in kept:
            gone.append(note)
    deleted = []
    for path in gone:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            deleted.append(path.name)
    if deleted:
        _LOGGER.info("Grammar cache: %d old files deleted", len(deleted))
    return deleted


def save_built(cache_dir: Path, inputs: str, built: Grammar, fsg_path: Path) -> None:
    """Note that ``built`` (written at ``fsg_path``) is what these inputs give."""
    meta = {
        "fsg": fsg_path.name,
        "states": built.states,
        "start": built.start,
        "final": built.final,
        "words": sorted(built.words),
        "oov": sorted(built.oov),
        "graph_arcs": built.graph_arcs,
        "list_sizes": built.list_sizes,
    }
    replace_atomically(_path(cache_dir, inputs), json.dumps(meta))
