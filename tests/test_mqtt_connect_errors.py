"""A connection that fails names its real cause once (then at most once a minute): a
certificate that fails verification, TLS and plain MQTT crossed, a refused port, an
unknown or unreachable host. Against real Mosquitto brokers, plain and TLS."""

from __future__ import annotations

import errno
import logging
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from satellite.mqtt import connection
from satellite.mqtt.diagnose import connect_failed, speaks_plain_mqtt, speaks_tls
from satellite.mqtt.settings import MqttSettings
from tests.mqtt_support import (
    Mosquitto,
    TlsFiles,
    closed_port,
    have_mosquitto,
    make_link,
    make_tls_files,
    running_broker,
)

pytestmark = pytest.mark.skipif(not have_mosquitto(), reason="mosquitto is not installed")


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def brokers(
    tmp_path_factory: pytest.TempPathFactory, tls: TlsFiles
) -> Iterator[tuple[Mosquitto, Mosquitto]]:
    folder = tmp_path_factory.mktemp("brokers")
    with (
        running_broker(folder / "plain") as plain,
        running_broker(folder / "tls", tls=tls) as secure,
    ):
        yield plain, secure


def _errors_over_attempts(
    port: int, folder: Path, caplog: pytest.LogCaptureFixture, attempts: int = 4, **kw: Any
) -> tuple[list[str], dict[str, int]]:
    link, _ = make_link(port, folder / "outbox", **kw)
    with caplog.at_level(logging.DEBUG, "satellite.mqtt"):
        link.start()
        for _ in range(400):
            # each attempt ended and counted (stopped while one is under way, the link
            # counts that one as no failure: the test raced it under load)
            if sum(link.stats.failures.values()) > attempts:
                break
            link.connected.wait(0.05)
        link.stop()
    assert link.stats.connects == 0
    assert link.stats.connect_attempts > attempts
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return errors, link.stats.failures


def _one_clear_line(errors: list[str], *needles: str) -> None:
    assert len(errors) == 1, errors  # once, not once per attempt
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert "Fix:" in errors[0]


def test_plain_mqtt_on_a_tls_port_is_named(
    brokers: tuple[Mosquitto, Mosquitto], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    errors, failures = _errors_over_attempts(brokers[1].port, tmp_path, caplog)
    _one_clear_line(errors, "the port speaks TLS and mqtt.tls is off", "mqtt.tls: true")
    assert sum(failures.values()) > 4


def test_tls_on_a_plain_port_is_named(
    brokers: tuple[Mosquitto, Mosquitto],
    tls: TlsFiles,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    errors, _ = _errors_over_attempts(brokers[0].port, tmp_path, caplog, tls_ca_file=str(tls.ca))
    _one_clear_line(errors, "TLS handshake", "the port speaks plain MQTT", "8883")


def test_a_certificate_that_fails_verification_gives_the_reason(
    brokers: tuple[Mosquitto, Mosquitto], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    errors, failures = _errors_over_attempts(brokers[1].port, tmp_path, caplog, tls=True)
    _one_clear_line(errors, "failed verification: self-signed certificate in certificate chain")
    assert "mqtt.tls_ca_file" in errors[0]
    assert set(failures) == {"SSLCertVerificationError"}


def test_a_refused_port_and_an_unknown_host_are_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    closed = closed_port()
    errors, _ = _errors_over_attempts(closed, tmp_path / "a", caplog)
    _one_clear_line(errors, "connection refused")
    caplog.clear()
    errors, _ = _errors_over_attempts(1883, tmp_path / "b", caplog, host="no-such-host.invalid")
    _one_clear_line(errors, "Cannot resolve the MQTT host 'no-such-host.invalid'")


def test_a_lasting_problem_is_logged_again_after_the_interval(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "PROBLEM_INTERVAL_SECONDS", 0.4)
    closed = closed_port()
    link, _ = make_link(closed, tmp_path / "outbox", reconnect_max_seconds=0.1)
    with caplog.at_level(logging.WARNING, "satellite.mqtt"):
        link.start()
        link.connected.wait(1.5)
        link.stop()
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert 2 <= len(errors) <= 5, len(errors)  # again per interval, not per attempt
    assert link.stats.connect_attempts > 2 * len(errors)


def test_probes_tell_tls_from_plain(brokers: tuple[Mosquitto, Mosquitto]) -> None:
    plain, secure = brokers
    assert speaks_plain_mqtt("127.0.0.1", plain.port)
    assert not speaks_tls("127.0.0.1", plain.port)
    assert speaks_tls("127.0.0.1", secure.port)
    assert not speaks_plain_mqtt("127.0.0.1", secure.port)


def _verify_error(message: str) -> ssl.SSLCertVerificationError:
    err = ssl.SSLCertVerificationError(1, f"certificate verify failed: {message}")
    err.verify_message = message
    return err


@pytest.mark.parametrize(
    ("err", "needles"),
    [
        (OSError(errno.EHOSTUNREACH, "No route to host"), ("unreachable", "No route")),
        (OSError(errno.ENETUNREACH, "Network is unreachable"), ("unreachable",)),
        (TimeoutError("timed out"), ("timed out", "firewall")),
        (_verify_error("certificate has expired"), ("certificate has expired", "renew")),
        (
            _verify_error("Hostname mismatch, certificate is not valid for 'hub'."),
            ("Hostname mismatch", "mqtt.host"),
        ),
        (None, ("Cannot connect to MQTT broker",)),
    ],
)
def test_causes_without_a_broker(err: BaseException | None, needles: tuple[str, ...]) -> None:
    problem = connect_failed(MqttSettings(host="hub", port=1), err)
    for needle in needles:
        assert needle in problem.message
    assert "Fix:" in problem.message


def test_a_missing_client_certificate_is_suggested(
    tls: TlsFiles, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with running_broker(tmp_path / "broker", tls=tls, require_client_cert=True) as broker:
        errors, _ = _errors_over_attempts(broker.port, tmp_path, caplog, tls_ca_file=str(tls.ca))
    _one_clear_line(errors, "may require a client certificate", "mqtt.tls_cert_file")
