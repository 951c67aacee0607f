"""Reading a configuration file's YAML with bounds: size, aliases, duplicate keys.

A configuration file is small and written by hand, so the loader refuses what only a
mistake or an attack produces, each with one problem line naming where and the fix:

- a file over ``MAX_CONFIG_BYTES`` (read no further than that);
- more than ``MAX_ALIASES`` aliases, or a document that would expand (aliases followed)
  to over ``MAX_NODES`` nodes: an alias bomb is refused on the composed node graph, with
  memory bounded by the file's own size, before anything is built from it;
- a key given twice in one mapping (YAML lets the last win silently): named by its key
  path and both lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .config_base import ConfigError, shown

#: Largest configuration file read, bytes.
MAX_CONFIG_BYTES = 1024 * 1024
#: Most aliases (``*name``) one file may use.
MAX_ALIASES = 100
#: Most nodes the document may hold with its aliases followed.
MAX_NODES = 100_000
_FIX_FILE = "Fix: pass the path of an existing file, e.g. config/satellite.yaml"


class _RefusedError(Exception):
    """The document breaks a bound; ``problem`` is its line for ConfigError."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts aliases as it composes (stops at ``MAX_ALIASES``)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call]
                raise _RefusedError(
                    f"(aliases): more than {MAX_ALIASES} YAML aliases (the one at line {line} "
                    "is over). Fix: write the values out; a configuration needs few or none"
                )
        return super().compose_node(parent, index)


def read_text(path: Path) -> str:
    """The file's text, at most ``MAX_CONFIG_BYTES``; ConfigError when it cannot be."""
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(str(path), [f"(file): not found. {_FIX_FILE}"]) from None
    except IsADirectoryError:
        raise ConfigError(str(path), [f"(file): is a directory. {_FIX_FILE}"]) from None
    except OSError as err:
        raise ConfigError(
            str(path),
            [f"(file): cannot be read ({err.strerror}). Fix: check the file's permissions"],
        ) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            str(path),
            [
                f"(file): larger than {MAX_CONFIG_BYTES // 1024} KiB, far more than a "
                "configuration needs. Fix: pass the right file, or start from "
                "config/satellite.yaml"
            ],
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            str(path),
            [
                f"(file): not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start}). "
                "Fix: save it as UTF-8"
            ],
        ) from None


def parse(text: str, source: str) -> Any:
    """The YAML document in ``text`` as Python data, within the bounds above."""
    try:
        loader = _BoundedLoader(text)
    except yaml.reader.ReaderError as err:  # a character YAML does not allow
        line = text.count("\n", 0, err.position) + 1
        column = err.position - (text.rfind("\n", 0, err.position) + 1) + 1
        raise ConfigError(
            source,
            [
                f"(syntax): character 0x{err.character:02x} at line {line}, column {column} is "
                "not allowed in YAML. Fix: remove it"
            ],
        ) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_size(node)
        _check_duplicates(node, [])
        return loader.construct_document(node)
    except _RefusedError as err:
        raise ConfigError(source, [err.problem]) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown place"
        raise ConfigError(
            source,
            [f"(syntax): invalid YAML at {where}. Fix: correct the indentation or quoting there"],
        ) from None
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_size(root: yaml.Node) -> None:
    """Refuse a document whose expanded size (aliases followed) is over ``MAX_NODES``;
    each distinct node is visited once, so an alias bomb costs no more than its text."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done or not children:
            sizes[id(node)] = 1 + sum(sizes.get(id(c), 0) for c in children)
            if sizes[id(node)] > MAX_NODES:
                raise _RefusedError(
                    f"(aliases): the document expands to over {MAX_NODES} values (aliases "
                    f"nested in aliases, near line {node.start_mark.line + 1}). Fix: write "
                    "the values out; a configuration needs few aliases or none"
                )
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)


def _check_duplicates(node: yaml.Node, path: list[str]) -> None:
    """Refuse a key given twice in one mapping, naming its key path and both lines."""
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _check_duplicates(item, [*path, str(index)])
        return
    if not isinstance(node, yaml.MappingNode):
        return
    first_line: dict[str, int] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
            continue
        key = str(key_node.value)
        line = key_node.start_mark.line + 1
        if key in first_line:
            where = ".".join(shown(p, quote=False) for p in [*path, key])
            raise _RefusedError(
                f"{where}: given twice (lines {first_line[key]} and {line}), and YAML would "
                "silently keep the last. Fix: keep one of them"
            )
        first_line[key] = line
        _check_duplicates(value_node, [*path, key])
