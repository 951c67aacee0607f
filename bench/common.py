"""Helpers shared by the benchmarks: timing stats, result files, a table printer."""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tests.corpus import Room

RESULTS = Path(__file__).resolve().parent / "results"


def stats_ms(samples_ns: Sequence[int]) -> dict[str, float]:
    """Mean, p50, p95, p99 and max of nanosecond timings, in milliseconds."""
    ms = np.asarray(samples_ns, dtype=np.float64) / 1e6
    return {
        "mean_ms": round(float(ms.mean()), 4),
        "p50_ms": round(float(np.percentile(ms, 50)), 4),
        "p95_ms": round(float(np.percentile(ms, 95)), 4),
        "p99_ms": round(float(np.percentile(ms, 99)), 4),
        "max_ms": round(float(ms.max()), 4),
        "count": len(ms),
    }


def machine() -> dict[str, Any]:
    """Where the numbers were taken."""
    return {
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "cpus_allowed": sorted(os.sched_getaffinity(0)),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def peak_rss_mb() -> float:
    """Peak resident set size of this process, MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def write_results(name: str, data: dict[str, Any]) -> Path:
    """Write ``bench/results/<name>.json`` and return its path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **data}, indent=2) + "\n", encoding="utf-8")
    return path


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print rows under headers, columns aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for index, row in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
        if index == 0:
            print("  ".join("-" * w for w in widths))


def rooms_labelled(parser: argparse.ArgumentParser, labels: Sequence[str]) -> tuple[Room, ...]:
    """The corpus rooms a bench's ``--rooms`` labels name (an unknown one: a usage error)."""
    from tests.corpus import labelled  # noqa: PLC0415 (only the benches of rooms load it)

    try:
        return labelled(labels)
    except ValueError as err:
        parser.error(f"--rooms: {err}")
