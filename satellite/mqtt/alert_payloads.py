"""``alert/active`` payloads: the open alerts Home Assistant has not acknowledged yet."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .payloads import Payload, PayloadError, check_request_id

#: Kinds of open alert: a call for help (``help``) and rushed speech (``alert``).
ALERT_KINDS = ("help", "rushed_speech")


@dataclass(frozen=True)
class ActiveAlert(Payload):
    """One open alert in ``alert/active``: the payload first published on ``source``
    (``help`` or ``alert``, with the same ``id`` and original ``time``), and how often
    it was sent."""

    id: str
    kind: str
    source: str
    time: float
    sent: int
    payload: dict[str, Any]

    def __post_init__(self) -> None:
        check_request_id("alert/active.alerts.id", self.id)
        if self.kind not in ALERT_KINDS:
            raise PayloadError(f"alert/active.alerts.kind: must be one of {', '.join(ALERT_KINDS)}")
        if not math.isfinite(self.time):
            raise PayloadError("alert/active.alerts.time: must be a finite number")


@dataclass(frozen=True)
class AlertActive(Payload):
    """``alert/active`` (retained): the alerts Home Assistant has not acknowledged yet,
    oldest first; ``notice`` says so in words while a call for help is among them."""

    topic: ClassVar[str] = "alert/active"

    alerts: tuple[ActiveAlert, ...]
    notice: str
    time: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; each alert as its own dict."""
        return {
            "alerts": [alert.to_dict() for alert in self.alerts],
            "notice": self.notice,
            "time": self.time,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Parse and check; raise PayloadError when invalid."""
        if not isinstance(data, dict) or not isinstance(data.get("alerts"), list):
            raise PayloadError("alert/active: expected an object with a list of 'alerts'")
        alerts = tuple(ActiveAlert.from_dict(item) for item in data["alerts"])
        head = _ActiveHead.from_dict({k: v for k, v in data.items() if k != "alerts"})
        return cls(alerts, head.notice, head.time)


@dataclass(frozen=True)
class _ActiveHead(Payload):
    """The fields of ``alert/active`` besides its list (checked by the shared checker)."""

    topic: ClassVar[str] = "alert/active"

    notice: str
    time: float
