"""What the doctor found: one line per check, OK / warning / problem, and how to fix it."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


class Level(enum.IntEnum):
    """How bad a finding is; the doctor's exit code is the worst level."""

    OK = 0  # also a check that does not apply here (``Finding.skipped``)
    WARNING = 1
    PROBLEM = 2


@dataclass(frozen=True, slots=True)
class Finding:
    """One check's outcome: what was looked at, what was found, and the fix if any."""

    check: str
    level: Level
    detail: str
    fix: str = ""
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        status = "skipped" if self.skipped else self.level.name.lower()
        return {"check": self.check, "status": status, "detail": self.detail, "fix": self.fix}


def ok(check: str, detail: str) -> Finding:
    return Finding(check, Level.OK, detail)


def skipped(check: str, detail: str) -> Finding:
    return Finding(check, Level.OK, detail, skipped=True)


def warning(check: str, detail: str, fix: str) -> Finding:
    return Finding(check, Level.WARNING, detail, fix)


def problem(check: str, detail: str, fix: str) -> Finding:
    return Finding(check, Level.PROBLEM, detail, fix)


def worst(findings: Iterable[Finding]) -> Level:
    return max((f.level for f in findings), default=Level.OK)


def as_text(findings: Sequence[Finding]) -> str:
    """A table a person reads: status, check, what was found, then the fix on its own line."""
    marks = {Level.OK: "OK", Level.WARNING: "WARN", Level.PROBLEM: "PROBLEM"}
    lines = []
    width = max((len(f.check) for f in findings), default=0)
    for finding in findings:
        mark = "SKIP" if finding.skipped else marks[finding.level]
        lines.append(f"{mark:<8}{finding.check:<{width}}  {finding.detail}")
        if finding.fix:
            lines.append(f"{'':<8}{'':<{width}}  fix: {finding.fix}")
    level = worst(findings)
    summary = {
        Level.OK: "all checks passed",
        Level.WARNING: "warnings only: the satellite runs, see the fixes above",
        Level.PROBLEM: "problems found: the satellite will not work as configured",
    }[level]
    lines.append(f"\n{summary}")
    return "\n".join(lines)


def as_json(findings: Sequence[Finding]) -> str:
    worst_level = worst(findings)
    return json.dumps(
        {"worst": worst_level.name.lower(), "checks": [f.to_dict() for f in findings]}, indent=2
    )
