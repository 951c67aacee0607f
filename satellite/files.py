"""Small file operations the caches and state files share."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def replace_atomically(path: Path, data: str | bytes, fsync: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` all at once: into a temporary file
    beside it, named by this process so that two processes never share one, which then
    replaces ``path``. A reader sees the old file or the new one, never half of one.
    ``fsync``: the new file is on the disk before it replaces the old one (state that
    must survive a power cut). On failure the temporary file is removed and the error
    raised."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as file:
            file.write(data.encode("utf-8") if isinstance(data, str) else data)
            if fsync:
                file.flush()
                os.fsync(file.fileno())
        temporary.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def touch(path: Path) -> None:
    """Mark ``path`` as just used (a cache keeps the most recently used); a file that
    is gone or read-only is left as it is."""
    with contextlib.suppress(OSError):
        os.utime(path)
