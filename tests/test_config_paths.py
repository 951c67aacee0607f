"""Path settings (mqtt files, prosody.state_path) share config_base._path."""

from __future__ import annotations

from typing import Any

import pytest
import voluptuous as vol

from satellite.config import ConfigError, validate
from satellite.config_base import check_optional, check_path

# (section, key, whether null is allowed)
PATH_KEYS: list[tuple[str, str, bool]] = [
    ("mqtt", "password_file", True),
    ("mqtt", "tls_ca_file", True),
    ("mqtt", "tls_cert_file", True),
    ("mqtt", "tls_key_file", True),
    ("mqtt", "outbox_path", False),
    ("prosody", "state_path", True),
]
NOT_PATHS: list[Any] = ["", "   ", 5, True, [], {}]


def test_path_drops_surrounding_whitespace() -> None:
    assert check_path("x")("  a/b  ") == "a/b"
    assert check_optional(check_path("x"))(None) is None


@pytest.mark.parametrize("value", [None, *NOT_PATHS])
def test_path_rejects_non_paths_with_a_fix(value: Any) -> None:
    with pytest.raises(vol.Invalid, match=r"expected a path, got .*Fix: write the path of it"):
        check_path("it")(value)


@pytest.mark.parametrize(("section", "key", "nullable"), PATH_KEYS)
def test_path_settings_accept_paths(section: str, key: str, nullable: bool) -> None:
    settings = getattr(validate({section: {key: "~/dir/file"}}), section)
    assert getattr(settings, key) == "~/dir/file"
    if nullable:
        assert getattr(getattr(validate({section: {key: None}}), section), key) is None


@pytest.mark.parametrize(("section", "key", "nullable"), PATH_KEYS)
@pytest.mark.parametrize("value", NOT_PATHS)
def test_path_settings_name_the_key_and_the_fix(
    section: str, key: str, nullable: bool, value: Any
) -> None:
    with pytest.raises(ConfigError) as info:
        validate({section: {key: value}})
    (problem,) = info.value.problems
    assert problem.startswith(f"{section}.{key}: expected a path, got {value!r}. Fix: "), problem
    if section == "prosody":
        assert "or write null" in problem, problem


def test_outbox_path_cannot_be_null() -> None:
    with pytest.raises(ConfigError, match=r"mqtt\.outbox_path: expected a path, got None"):
        validate({"mqtt": {"outbox_path": None}})
