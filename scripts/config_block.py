"""Print a config section as commented YAML with its defaults (for config/satellite.yaml).

Usage: python scripts/config_block.py SECTION [SECTION ...]
"""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from typing import Any

import yaml

from satellite.config import Config
from satellite.config_base import Section


def block(name: str, section: Section, indent: int = 0) -> list[str]:
    """Lines of YAML for one section, every option preceded by its documentation."""
    pad = " " * indent
    out = [f"{pad}{name}:"]
    for f in dataclasses.fields(section):  # type: ignore[arg-type]
        value: Any = getattr(section, f.name)
        if isinstance(value, Section):
            out.extend(block(f.name, value, indent + 2))
            continue
        doc = str(f.metadata.get("doc", "")).rstrip(".") + "."
        out.extend(f"{pad}  # {line}" for line in textwrap.wrap(doc, 84 - indent))
        text = yaml.safe_dump(plain(value), default_flow_style=True, width=1000).strip()
        out.append(f"{pad}  {f.name}: {text.removesuffix('...').strip()}")
    return out


def plain(value: Any) -> Any:
    """A value as it is written in YAML: tuples as lists, entities as mappings."""
    if isinstance(value, tuple):
        return [plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: v for k, v in dataclasses.asdict(value).items() if v is not None}
    return value


def main() -> int:
    config = Config()
    for name in sys.argv[1:]:
        print("\n".join(block(name, getattr(config, name))))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
