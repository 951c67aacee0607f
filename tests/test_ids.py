"""Ids unique across restarts: each process draws its own boot id."""

from __future__ import annotations

import subprocess
import sys

from satellite.ids import BOOT_ID, boot_of, id_counter
from tests.cli_support import REPO


def _boot_id_of_a_new_process() -> str:
    code = "from satellite.ids import BOOT_ID; print(BOOT_ID)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_restart_draws_a_new_boot_id() -> None:
    boots = {BOOT_ID, _boot_id_of_a_new_process(), _boot_id_of_a_new_process()}
    assert len(boots) == 3


def test_ids_count_without_gaps_and_carry_the_boot_id() -> None:
    ids = id_counter("u", "cafe0001")
    assert [next(ids) for _ in range(3)] == ["ucafe0001-1", "ucafe0001-2", "ucafe0001-3"]
    assert boot_of("ucafe0001-2", "u") == "cafe0001"
    assert boot_of("u1", "u") is None
