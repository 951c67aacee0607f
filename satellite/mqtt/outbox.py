"""A bounded on-disk outbox for QoS 1 events (SQLite, one table, in order).

An event is written here before it is handed to the MQTT client and removed when the
broker acknowledges it, so events produced while the broker is unreachable, or sent but
not yet acknowledged, survive a broker restart and a satellite restart. When the bound
is hit the oldest messages are dropped and counted (``dropped_total``), never silently.

Not thread-safe: one thread (the link's worker) owns it.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import SatelliteError

_LOGGER = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO counters VALUES ('appended_total', 0), ('dropped_total', 0);
"""


class OutboxError(SatelliteError):
    """The outbox file cannot be opened or written."""


@dataclass(frozen=True, slots=True)
class OutboxMessage:
    """A stored message; ``seq`` grows with every append and gives the order."""

    seq: int
    topic: str
    payload: bytes


class Outbox:
    """Bounded, ordered, persistent store of messages waiting for an acknowledgement."""

    def __init__(self, path: Path | str, max_messages: int, fsync: bool = True) -> None:
        self.path = Path(path)
        self.max_messages = max_messages
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as err:
            raise OutboxError(
                f"mqtt.outbox_path: cannot open {self.path} ({err}). Fix: point it at a "
                "writable file on local storage"
            ) from None
        self._depth = 0
        (self._count,) = self._db.execute("SELECT COUNT(*) FROM outbox").fetchone()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def __len__(self) -> int:
        return int(self._count)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group several appends and removals into one transaction (one disk sync)."""
        if self._depth == 0:
            self._db.execute("BEGIN IMMEDIATE")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                self._db.execute("ROLLBACK")
                (self._count,) = self._db.execute("SELECT COUNT(*) FROM outbox").fetchone()
            raise
        self._depth -= 1
        if self._depth == 0:
            self._db.execute("COMMIT")

    def append(self, topic: str, payload: bytes) -> tuple[OutboxMessage, list[int]]:
        """Store a message; return it and the seqs of the oldest ones dropped for room."""
        with self.batch():
            cursor = self._db.execute(
                "INSERT INTO outbox (topic, payload) VALUES (?, ?)", (topic, payload)
            )
            self._bump("appended_total", 1)
            self._count += 1
            dropped: list[int] = []
            excess = self._count - self.max_messages
            if excess > 0:
                dropped = [
                    seq
                    for (seq,) in self._db.execute(
                        "SELECT seq FROM outbox ORDER BY seq LIMIT ?", (excess,)
                    )
                ]
                self._db.execute("DELETE FROM outbox WHERE seq <= ?", (dropped[-1],))
                self._count -= len(dropped)
                self._bump("dropped_total", len(dropped))
        assert cursor.lastrowid is not None
        return OutboxMessage(cursor.lastrowid, topic, payload), dropped

    def remove(self, seq: int) -> None:
        """Forget an acknowledged message (no error when it is already gone)."""
        with self.batch():
            cursor = self._db.execute("DELETE FROM outbox WHERE seq = ?", (seq,))
            self._count -= cursor.rowcount

    def messages(self) -> list[OutboxMessage]:
        """Every stored message, oldest first."""
        return [
            OutboxMessage(seq, topic, bytes(payload))
            for seq, topic, payload in self._db.execute(
                "SELECT seq, topic, payload FROM outbox ORDER BY seq"
            )
        ]

    @property
    def appended_total(self) -> int:
        """Messages ever appended to this file (persists across restarts)."""
        return self._counter("appended_total")

    @property
    def dropped_total(self) -> int:
        """Messages dropped because the bound was hit (persists across restarts)."""
        return self._counter("dropped_total")

    def _counter(self, name: str) -> int:
        row = self._db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        return int(row[0]) if row else 0

    def _bump(self, name: str, by: int) -> None:
        self._db.execute("UPDATE counters SET value = value + ? WHERE name = ?", (by, name))
