"""Ids that stay unique across restarts: a boot id, drawn once per process, in each.

Utterance, alert and help ids are published and answered over MQTT (a ``response`` names
its utterance, an ``alert/ack`` its alert). A counter alone restarts at 1 with the
process, so an answer meant for an utterance before a restart would match a new one; the
boot id in every id tells them apart.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator

#: Drawn once per process: 8 hex digits (32 random bits).
BOOT_ID = secrets.token_hex(4)


def id_counter(prefix: str, boot_id: str = BOOT_ID) -> Iterator[str]:
    """``<prefix><boot id>-1``, ``<prefix><boot id>-2``, ... unique across restarts."""
    return (f"{prefix}{boot_id}-{n}" for n in itertools.count(1))


def boot_of(item_id: str, prefix: str) -> str | None:
    """The boot id inside an id made by ``id_counter``; None for an id of another shape."""
    if not item_id.startswith(prefix):
        return None
    boot, sep, number = item_id[len(prefix) :].partition("-")
    return boot if sep and number.isdigit() and boot else None
