"""systemd's notify protocol: READY, WATCHDOG and STATUS datagrams to ``$NOTIFY_SOCKET``.

With ``Type=notify`` and ``WatchdogSec=`` in the unit, systemd passes the socket path in
``NOTIFY_SOCKET`` and the watchdog interval in ``WATCHDOG_USEC``; a service that stops
sending ``WATCHDOG=1`` within the interval is killed and restarted. The frame loop sends
the pings itself (``Watchdog.tick`` per chunk), so a loop that stalls (capture hung, a
stage stuck) is restarted and a busy one is not. No dependency: it is one datagram on a
Unix socket. Without ``NOTIFY_SOCKET`` (not under systemd) every call does nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TypeVar

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")


class Notifier:
    """Sends state lines to systemd's notify socket, if there is one."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        path = env.get("NOTIFY_SOCKET", "")
        #: Where datagrams go; None when not started by systemd with a notify socket.
        self.address: str | None = None
        if path.startswith("@"):  # abstract namespace
            self.address = "\0" + path[1:]
        elif path.startswith("/"):
            self.address = path
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        watched = usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid()))
        #: The watchdog interval systemd expects pings within; None: no watchdog.
        self.watchdog_seconds = int(usec) / 1e6 if watched else None
        self._socket: socket.socket | None = None
        self._failed = False

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *lines: str) -> bool:
        """One datagram of ``KEY=value`` lines; False when it could not be sent."""
        if self.address is None or self._failed:
            return False
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._socket.sendto("\n".join(lines).encode(), self.address)
        except OSError as err:
            self._failed = True  # once: systemd will say the service never became ready
            _LOGGER.error("Cannot notify systemd through %s: %s", self.address.lstrip("\0"), err)
            return False
        return True

    def ready(self, status: str) -> None:
        self.send("READY=1", f"STATUS={status}")

    def status(self, status: str) -> None:
        self.send(f"STATUS={status}")

    def stopping(self) -> None:
        self.send("STOPPING=1")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class Watchdog:
    """Pings systemd's watchdog from the frame loop at a third of its interval."""

    def __init__(
        self,
        notifier: Notifier,
        status: Callable[[], str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.notifier = notifier
        self.status = status
        self.clock = clock
        interval = notifier.watchdog_seconds
        #: Seconds between pings (None: no watchdog, only READY and STATUS).
        self.every_seconds = interval / 3 if interval is not None else None
        self.pings = 0
        self._ready = False
        self._last = -float("inf")
        self._last_status = ""

    def tick(self) -> None:
        """The frame loop is alive: READY once, then WATCHDOG and STATUS when due."""
        if not self.notifier.enabled:
            return
        now = self.clock()
        status = self.status()
        if not self._ready:
            self._ready = True
            self._last = now
            self._last_status = status
            self.notifier.ready(status)
            return
        due = self.every_seconds is not None and now - self._last >= self.every_seconds
        lines = ["WATCHDOG=1"] if due else []
        if status != self._last_status:
            lines.append(f"STATUS={status}")
            self._last_status = status
        if lines:
            if due:
                self._last = now
                self.pings += 1
            self.notifier.send(*lines)

    def watch(self, items: Iterable[T]) -> Iterator[T]:
        """Pass the frames through, ticking before each: a stalled source stops the pings."""
        for item in items:
            self.tick()
            yield item
