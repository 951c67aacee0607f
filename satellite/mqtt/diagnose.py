"""Why a connection to the broker failed, in one line that names the cause and the fix.

paho reports a failed connect only as "it failed" (the exception is still being handled
when ``on_connect_fail`` runs, so ``sys.exc_info()`` holds it) and a broker that hangs up
before its CONNACK as a plain disconnect. These turn both into a :class:`Problem`: the
certificate's verify reason, a refused port, an unknown or unreachable host. When TLS and
plain MQTT may be crossed, a short probe of the port says which one it speaks.
"""

from __future__ import annotations

import errno
import socket
import ssl
from dataclasses import dataclass

from .settings import MqttSettings

#: How long a probe of the broker's port may take, s.
PROBE_SECONDS = 2.0
#: An MQTT 3.1.1 CONNECT (clean session, empty client id): a plain broker answers CONNACK.
_CONNECT = b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x3c\x00\x00"
_CONNACK = 0x20
_UNREACHABLE = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN, errno.ENETDOWN}


@dataclass(frozen=True)
class Problem:
    """A connect failure: ``key`` names its kind (logged once per kind, then at most once
    a minute), ``message`` says what happened and the fix."""

    key: str
    message: str


def _where(settings: MqttSettings) -> str:
    return f"{settings.host}:{settings.effective_port}"


def connect_failed(settings: MqttSettings, err: BaseException | None) -> Problem:
    """The Problem for an exception raised while connecting (TCP, DNS or TLS)."""
    where = _where(settings)
    if isinstance(err, ssl.SSLCertVerificationError):
        return _verify_failed(settings, err)
    if isinstance(err, socket.gaierror):
        return Problem(
            "unknown_host",
            f"Cannot resolve the MQTT host {settings.host!r} ({err.strerror}). Fix: set "
            "mqtt.host to a name this device can resolve, or to an IP address",
        )
    if isinstance(err, ConnectionRefusedError):
        return Problem(
            "refused",
            f"Nothing accepts connections on {where} (connection refused). Fix: check "
            "mqtt.host and mqtt.port, and that the broker runs",
        )
    if isinstance(err, OSError) and err.errno in _UNREACHABLE:
        return Problem(
            "unreachable",
            f"The MQTT host {settings.host} is unreachable ({err.strerror}). Fix: check "
            "mqtt.host and this device's network",
        )
    if isinstance(err, TimeoutError):
        return Problem(
            "timeout",
            f"No answer from {where} (timed out). Fix: check mqtt.host and mqtt.port, and "
            "that no firewall drops the connection",
        )
    if settings.use_tls and isinstance(err, ssl.SSLError | ConnectionResetError | EOFError):
        return _handshake_failed(settings, err)
    detail = f" ({err})" if err is not None else ""
    return Problem(
        "connect_failed",
        f"Cannot connect to MQTT broker {where}{detail}. Fix: check mqtt.host, mqtt.port and "
        "that the broker runs",
    )


def closed_before_connack(settings: MqttSettings, reason: object) -> Problem:
    """The Problem for a broker that hung up before answering CONNECT."""
    where = _where(settings)
    if not settings.use_tls and speaks_tls(settings.host, settings.effective_port):
        return Problem(
            "plain_on_tls",
            f"MQTT broker {where} closed the connection before answering ({reason}): the "
            "port speaks TLS and mqtt.tls is off. Fix: set mqtt.tls: true and "
            "mqtt.tls_ca_file to the broker's CA, or use its plain port (usually 1883)",
        )
    if settings.use_tls and settings.tls_cert_file is None:
        return Problem(
            "closed_early",
            f"MQTT broker {where} closed the TLS connection before answering CONNECT "
            f"({reason}); it may require a client certificate. Fix: set "
            "mqtt.tls_cert_file and mqtt.tls_key_file, or see the broker's log",
        )
    return Problem(
        "closed_early",
        f"MQTT broker {where} closed the connection before answering CONNECT ({reason}). "
        "Fix: check that mqtt.port is the broker's MQTT port, and the broker's log",
    )


def _verify_failed(settings: MqttSettings, err: ssl.SSLCertVerificationError) -> Problem:
    reason = str(err.verify_message or err.reason or err)
    low = reason.lower()
    if "hostname" in low or "ip address mismatch" in low:
        fix = "set mqtt.host to a name (or address) the certificate holds, or reissue it"
    elif "expired" in low or "not yet valid" in low:
        fix = "renew the broker's certificate (and check this device's clock)"
    elif "self-signed" in low or "issuer" in low:
        fix = "set mqtt.tls_ca_file to the CA certificate that signed the broker's"
    else:
        fix = "check mqtt.tls_ca_file and the broker's certificate"
    return Problem(
        "verify_failed",
        f"The TLS certificate of MQTT broker {_where(settings)} failed verification: "
        f"{reason}. Fix: {fix}",
    )


def _handshake_failed(settings: MqttSettings, err: BaseException) -> Problem:
    where = _where(settings)
    detail = getattr(err, "strerror", None) or getattr(err, "reason", None) or str(err) or "EOF"
    if speaks_plain_mqtt(settings.host, settings.effective_port):
        return Problem(
            "tls_on_plain",
            f"The TLS handshake with {where} failed ({detail}): the port speaks plain MQTT. "
            "Fix: use the broker's TLS port (usually 8883), or set mqtt.tls: false and "
            "remove mqtt.tls_ca_file",
        )
    return Problem(
        "tls_handshake",
        f"The TLS handshake with {where} failed ({detail}). Fix: check that mqtt.port is "
        "the broker's TLS port, and the broker's TLS set-up",
    )


def speaks_tls(host: str, port: int, timeout: float = PROBE_SECONDS) -> bool:
    """True when a TLS handshake (certificate not checked) completes on host:port."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with (
            socket.create_connection((host, port), timeout=timeout) as sock,
            context.wrap_socket(sock, server_hostname=host),
        ):
            return True
    except (OSError, ValueError):
        return False


def speaks_plain_mqtt(host: str, port: int, timeout: float = PROBE_SECONDS) -> bool:
    """True when host:port answers a plain MQTT CONNECT with a CONNACK."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(_CONNECT)
            first = sock.recv(1)
    except OSError:
        return False
    return bool(first) and first[0] == _CONNACK
