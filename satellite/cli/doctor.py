"""``pocket-satellite doctor``: check a Pi before (or instead of) reading logs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

DEFAULT_CONFIG = Path("/etc/pocket-satellite/satellite.yaml")


def add_parser(sub: Any) -> None:
    """Register ``pocket-satellite doctor`` on the CLI's subparsers."""
    doctor = sub.add_parser(
        "doctor",
        help="check config, audio devices, models, broker, grammar, LLM and the machine",
        description="Each check prints OK, WARN or PROBLEM with the fix. Exit code: 0 all "
        "OK, 1 warnings, 2 problems.",
    )
    doctor.add_argument(
        "--config", type=Path, default=DEFAULT_CONFIG, help=f"default: {DEFAULT_CONFIG}"
    )
    doctor.add_argument("--json", action="store_true", help="print the findings as JSON")
    doctor.add_argument(
        "--listen-seconds",
        type=float,
        default=2.0,
        help="how long to measure the microphone's level (default 2)",
    )
    doctor.set_defaults(func=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    from ..doctor.checks import diagnose  # noqa: PLC0415
    from ..doctor.report import as_json, as_text, worst  # noqa: PLC0415

    findings = diagnose(args.config, args.listen_seconds)
    print(as_json(findings) if args.json else as_text(findings))
    return int(worst(findings))
