"""Running a ``pocket-satellite`` command as a user does: a child process, JSON lines out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
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


class LiveRun:
    """``pocket-satellite run --input -`` in a child process, fed 16 kHz audio the way a
    microphone delivers it. Use it as a context manager: a child still running at the
    end is killed."""

    #: 100 ms of silence, raw 16 kHz mono S16LE.
    SILENCE = bytes(3200)

    def __init__(self, config: Path, env: dict[str, str] | None = None) -> None:
        self.child = subprocess.Popen(
            [sys.executable, "-m", "satellite", "run", "--config", str(config), "--input", "-"],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env if env is not None else os.environ.copy(),
            cwd=REPO,
        )

    def feed(self, audio: bytes = SILENCE, seconds: float = 0.1) -> None:
        """Write ``audio`` (silence: 100 ms) and wait ``seconds``, as a live input would."""
        assert self.child.stdin is not None
        self.child.stdin.write(audio)
        self.child.stdin.flush()
        time.sleep(seconds)

    def finish(self, timeout: float = 60.0) -> int:
        """The input ends: the satellite's exit code once it has stopped."""
        assert self.child.stdin is not None
        self.child.stdin.close()
        return self.child.wait(timeout)

    def stderr(self) -> str:
        """What the satellite wrote on stderr (once it has ended)."""
        assert self.child.stderr is not None
        return self.child.stderr.read().decode()

    def __enter__(self) -> LiveRun:
        return self

    def __exit__(self, *_: object) -> None:
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait()
