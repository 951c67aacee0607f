"""The package's shape: imports run one way, modules and classes stay small.

Read from the source with ``ast`` (nothing is imported): a subpackage of ``satellite``
(``audio``, ``stt``, ...) or a top-level module (``app``, ``pipeline``, ...) is one node;
an import from one node to another is an edge. Imports under ``if TYPE_CHECKING:`` do not
count (they do not run).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "satellite"
#: Lower layers: they must not know the link, the app or the command line.
STAGES = ("frontend", "stt", "nlu", "tts", "prosody", "audio")
UPPER = ("mqtt", "app", "cli")
MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 250


def _modules() -> Iterator[tuple[str, ast.Module, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, ast.parse(path.read_text(encoding="utf-8")), path


def _node(module: str) -> str:
    """``satellite.audio.player`` -> ``audio``; ``satellite.app`` -> ``app``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imports(name: str, tree: ast.Module, is_package: bool) -> set[str]:
    found: set[str] = set()
    skipped = {
        id(child)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for child in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
                if not node.module:  # from . import x: x is a module, or a name in base
                    found.update(
                        f"{target}.{alias.name}"
                        for alias in node.names
                        if (PACKAGE.parent / target.replace(".", "/") / alias.name).exists()
                        or (PACKAGE.parent / target.replace(".", "/") / f"{alias.name}.py").exists()
                    )
            else:
                target = node.module or ""
            found.add(target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {t for t in found if t == "satellite" or t.startswith("satellite.")}


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, tree, path in _modules():
        source = _node(name)
        for target in _imports(name, tree, path.name == "__init__.py"):
            if target == "satellite":
                continue
            if _node(target) != source:
                edges.setdefault(source, set()).add(_node(target))
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_reader_finds_imports() -> None:
    edges = _graph()
    assert "audio" in edges["tts"]  # tts/speaker.py uses the player
    assert "pipeline" in edges["cli"]  # the run command builds the pipeline


def test_no_import_cycle_between_parts_of_the_package() -> None:
    assert _cycle(_graph()) is None, " -> ".join(_cycle(_graph()) or [])


@pytest.mark.parametrize("stage", STAGES)
def test_stages_know_nothing_of_the_link_the_app_or_the_command_line(stage: str) -> None:
    assert not (_graph().get(stage, set()) & set(UPPER))


def test_modules_and_classes_stay_small() -> None:
    big: list[str] = []
    for name, tree, path in _modules():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            big.append(f"module {name}: {lines} lines")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    big.append(f"class {name}.{node.name}: {size} lines")
    assert not big, big


def test_no_test_reaches_into_private_names_of_the_package() -> None:
    tests = Path(__file__).resolve().parent
    private: list[str] = []
    for path in sorted(tests.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("satellite")
                and any(alias.name.startswith("_") for alias in node.names)
            ):
                private.append(f"{path.name}: from {node.module} import _...")
    assert not private, private
