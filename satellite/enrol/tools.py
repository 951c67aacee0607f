"""Running the CMU Sphinx tools an enrolment uses (Debian: ``sphinxbase-utils``,
``sphinxtrain``, ``pocketsphinx``; the same packages on a Pi, arm64)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .inputs import EnrolError

#: Where Debian puts sphinxtrain's programs (not on PATH).
SPHINXTRAIN_DIRS = (Path("/usr/lib/sphinxtrain"), Path("/usr/local/lib/sphinxtrain"))
#: Which Debian package has each program.
PACKAGES = {
    "sphinx_fe": "sphinxbase-utils",
    "pocketsphinx_mdef_convert": "pocketsphinx",
    "bw": "sphinxtrain",
    "mllr_solve": "sphinxtrain",
}
#: Longest a tool may run, s (20 prompts take about a second).
TIMEOUT_SECONDS = 600.0
INSTALL = "sudo apt-get install sphinxbase-utils sphinxtrain pocketsphinx"


def find_tool(name: str) -> Path:
    """The program ``name``, on PATH or in sphinxtrain's folder."""
    found = shutil.which(name)
    if found:
        return Path(found)
    for folder in SPHINXTRAIN_DIRS:
        if os.access(folder / name, os.X_OK):
            return folder / name
    raise EnrolError(
        f"Enrolment needs {name} (Debian package {PACKAGES.get(name, 'sphinxtrain')}), "
        f"which is not installed. Fix: {INSTALL}"
    )


def run_tool(name: str, args: list[str], log: Path) -> str:
    """Run a tool with ``args``; its output goes to ``log`` and is returned. A failure is
    an ``EnrolError`` quoting the tool's own error lines."""
    command = [os.fspath(find_tool(name)), *args]
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,  # bw waits on a terminal after some errors
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise EnrolError(f"{name} ran over {TIMEOUT_SECONDS:g} s (log: {log})") from err
    output = done.stdout.decode(errors="replace")
    log.write_text(output, encoding="utf-8")
    if done.returncode != 0:
        errors = [ln for ln in output.splitlines() if "ERROR" in ln or "FATAL" in ln]
        said = "; ".join(errors[-3:]) or output.strip().splitlines()[-1:]
        raise EnrolError(f"{name} failed (exit {done.returncode}): {said} (log: {log})")
    return output
