"""Open alerts: a call for help or a rushed-speech alert stays open until HA acknowledges it.

The outbox gets an event to the broker, not to Home Assistant: HA's MQTT client connects
with a clean session, so a QoS 1 ``help`` published while HA restarts is acknowledged by
the broker and never reaches HA. So each ``help`` and ``alert`` gets an id unique across
restarts (``h<boot>-N``, ``a<boot>-N``) and stays open until an ``alert/ack`` with that
id arrives. The open alerts are

- published retained on ``alert/active`` (HA reads them when it starts, fires each
  once and acknowledges it), again on every connect (a broker restart may lose it);
- kept in a JSON file next to the outbox, so a satellite restart keeps them open;
- for a call for help, re-sent on ``help`` after 10 s, 30 s, 60 s, then every 5 min
  (same id and original time: consumers drop duplicates by id), while ``notice`` says
  the help request is not yet acknowledged by Home Assistant.

Not thread-safe: the link's worker thread owns it.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from ..files import replace_atomically
from ..ids import BOOT_ID, id_counter
from .alert_payloads import ActiveAlert, AlertActive
from .payloads import PayloadError

_LOGGER = logging.getLogger(__name__)

#: Waits before each re-send of an unacknowledged call for help, s; the last repeats.
RESEND_AFTER_SECONDS: Final = (10.0, 30.0, 60.0, 300.0)
#: Open alerts kept at most; beyond it the oldest rushed-speech alert goes first.
MAX_OPEN_ALERTS: Final = 100
#: ``alert/active``'s notice while a call for help is open.
NOT_ACKNOWLEDGED: Final = "help request not yet acknowledged by Home Assistant"
#: The event types that open an alert -> its kind, and the prefix of its ids.
OPENED_BY: Final = {"help_requested": ("help", "h"), "alert": ("rushed_speech", "a")}
_FILE_VERSION = 1


@dataclass(frozen=True, slots=True)
class _Entry:
    """An open alert and when a call for help is sent again (Unix s; inf: never)."""

    alert: ActiveAlert
    raw: bytes
    next_send_at: float


class OpenAlerts:
    """The open alerts of one satellite: open, acknowledge, re-send, persist."""

    def __init__(
        self,
        path: Path,
        fsync: bool = True,
        boot_id: str = BOOT_ID,
        resend_after_seconds: tuple[float, ...] = RESEND_AFTER_SECONDS,
    ) -> None:
        self.path = path
        self.fsync = fsync
        self.resend_after_seconds = resend_after_seconds
        self._ids = {name: id_counter(prefix, boot_id) for name, (_, prefix) in OPENED_BY.items()}
        self._open: dict[str, _Entry] = self._load()
        #: True when ``alert/active`` should be published again (it is on every connect).
        self.changed = False
        self.unknown_acks = 0
        self.resent = 0
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._open)

    def new_id(self, event_type: str) -> str | None:
        """A fresh id for an event of ``event_type``; None when it opens no alert."""
        ids = self._ids.get(event_type)
        return None if ids is None else next(ids)

    def open(self, event_type: str, source: str, alert_id: str, time: float, raw: bytes) -> None:
        """Keep the alert of ``event_type`` first published on topic path ``source`` (its
        payload ``raw``) open."""
        kind = OPENED_BY[event_type][0]
        alert = ActiveAlert(alert_id, kind, source, time, 1, json.loads(raw))
        next_at = time + self.resend_after_seconds[0] if kind == "help" else float("inf")
        self._open[alert_id] = _Entry(alert, raw, next_at)
        while len(self._open) > MAX_OPEN_ALERTS:
            self._drop_one()
        self._save()

    def ack(self, alert_id: str) -> bool:
        """Close an alert HA acknowledged; False (and counted) when it is not open."""
        if self._open.pop(alert_id, None) is None:
            self.unknown_acks += 1
            return False
        _LOGGER.info("Home Assistant acknowledged alert %s", alert_id)
        self._save()
        return True

    def due(self, now: float) -> list[tuple[str, bytes]]:
        """The calls for help to send again now, as (topic path, payload); each is
        scheduled for its next re-send."""
        out: list[tuple[str, bytes]] = []
        for alert_id, entry in list(self._open.items()):
            if entry.next_send_at > now:
                continue
            sent = entry.alert.sent + 1
            waits = self.resend_after_seconds
            wait = waits[min(sent - 1, len(waits) - 1)]
            alert = replace(entry.alert, sent=sent)
            self._open[alert_id] = _Entry(alert, entry.raw, now + wait)
            out.append((entry.alert.source, entry.raw))
            _LOGGER.warning(
                "Help request %s not yet acknowledged by Home Assistant: sent "
                "again (%d times in all)",
                alert_id,
                sent,
            )
        if out:
            self.resent += len(out)
            self._save()
        return out

    def seconds_to_next(self, now: float) -> float | None:
        """Seconds until a re-send is due (0 when overdue); None when none is waiting."""
        soonest = min((e.next_send_at for e in self._open.values()), default=float("inf"))
        return None if soonest == float("inf") else max(0.0, soonest - now)

    def active(self, now: float) -> AlertActive:
        """The ``alert/active`` payload; clears ``changed``."""
        self.changed = False
        alerts = tuple(e.alert for e in self._open.values())
        help_open = any(a.kind == "help" for a in alerts)
        return AlertActive(alerts, NOT_ACKNOWLEDGED if help_open else "", round(now, 6))

    # --- the file ---------------------------------------------------------------------

    def _drop_one(self) -> None:
        entries = list(self._open.values())
        victim = next((e for e in entries if e.alert.kind != "help"), entries[0])
        del self._open[victim.alert.id]
        self.dropped += 1
        _LOGGER.error(
            "More than %d open alerts: dropped %s (%s) unacknowledged",
            MAX_OPEN_ALERTS,
            victim.alert.id,
            victim.alert.kind,
        )

    def _save(self) -> None:
        self.changed = True
        data = {
            "version": _FILE_VERSION,
            "alerts": [
                {"alert": e.alert.to_dict(), "next_send_at": _finite(e.next_send_at)}
                for e in self._open.values()
            ],
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(self.path, json.dumps(data, ensure_ascii=False), fsync=self.fsync)

    def _load(self) -> dict[str, _Entry]:
        if not self.path.exists():
            return {}
        entries: dict[str, _Entry] = {}
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
            for item in data["alerts"]:
                alert = ActiveAlert.from_dict(item["alert"])
                raw = json.dumps(alert.payload, separators=(",", ":"), ensure_ascii=False)
                next_at = item["next_send_at"]
                never = next_at is None
                entries[alert.id] = _Entry(
                    alert, raw.encode(), float("inf") if never else float(next_at)
                )
        except (OSError, ValueError, KeyError, TypeError, PayloadError) as err:
            aside = self.path.with_name(self.path.name + ".bad")
            os.replace(self.path, aside)
            _LOGGER.error(
                "Open alerts file %s is unreadable (%s): moved to %s; alerts in it that "
                "Home Assistant did not acknowledge are not sent again. Fix: check the "
                "disk the outbox is on",
                self.path,
                err,
                aside,
            )
            return {}
        if entries:
            _LOGGER.warning(
                "%d alert(s) from before are still not acknowledged by Home Assistant",
                len(entries),
            )
        return entries


def _finite(value: float) -> float | None:
    return None if value == float("inf") else value


def open_alerts_path(outbox_file: Path) -> Path:
    """Where the open alerts are kept: next to the outbox."""
    return outbox_file.with_name(outbox_file.stem + ".open_alerts.json")
