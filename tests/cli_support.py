"""Running a ``pocket-satellite`` command as a user does: a child process, JSON lines out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def run_command(
    command: str, *args: str, stdin: bytes | None = None, timeout: float = 120.0
) -> tuple[int, list[dict[str, Any]], str]:
    """Exit code, the JSON objects printed one per line, and stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "satellite", command, *args],
        input=stdin,
        capture_output=True,
        check=False,
        env=os.environ.copy(),
        cwd=REPO,
        timeout=timeout,
    )
    lines = [json.loads(line) for line in proc.stdout.decode().splitlines() if line.strip()]
    return proc.returncode, lines, proc.stderr.decode()
