"""Building blocks of the configuration: validators, the section mixin, ConfigError.

Subsystems declare their settings with these (``Section`` + ``option``) in their own
modules; ``satellite.config`` assembles the sections into the root ``Config``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, Self

import voluptuous as vol

from .errors import SatelliteError


class ConfigError(SatelliteError):
    """The configuration is invalid. ``problems`` lists each as 'key.path: what. Fix: how'."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{source}: {len(problems)} problem(s) in the configuration:\n{lines}")


#: Longest value (its repr) quoted in a problem line, characters.
MAX_SHOWN_CHARS = 80


def shown(value: Any, quote: bool = True) -> str:
    """``value`` for a message: its repr (or ``str`` with ``quote=False``), cut at
    ``MAX_SHOWN_CHARS`` with "…" (a 10 MB value is not echoed back)."""
    text = repr(value) if quote else str(value)
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    return f"{text[: MAX_SHOWN_CHARS - 1]}… ({len(text)} characters)"


def shorten(message: str, limit: int = 4 * MAX_SHOWN_CHARS) -> str:
    """A problem line of at most about ``limit`` characters: the part before "Fix:" is
    cut in the middle when longer (a validator that quoted a huge value whole)."""
    if len(message) <= limit:
        return message
    at = message.find(" Fix:")
    head, fix = (message[:at], message[at:]) if at >= 0 else (message, "")
    keep = max(MAX_SHOWN_CHARS, limit - min(len(fix), limit // 2))
    if len(head) > keep:
        head = f"{head[: keep // 2]}…{head[-keep // 2 :]}"
    return head + fix[: limit // 2]


# --- validators (each carries the fix in its message) ---------------------------------


def check_number(low: float, high: float, unit: str = "") -> Callable[[Any], float]:
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise vol.Invalid(
                f"expected a number, got {shown(value)}. Fix: use a number from {low} to "
                f"{high}{unit}"
            )
        if not low <= value <= high:
            raise vol.Invalid(
                f"{value} is out of range. Fix: use a value from {low} to {high}{unit}"
            )
        return float(value)

    return check


def check_integer(low: int, high: int, unit: str = "") -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise vol.Invalid(
                f"expected a whole number, got {shown(value)}. Fix: use a whole "
                f"number from {low} to {high}{unit}"
            )
        if not low <= value <= high:
            raise vol.Invalid(
                f"{value} is out of range. Fix: use a whole number from {low} to {high}{unit}"
            )
        return value

    return check


def check_choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in options:
            raise vol.Invalid(
                f"{shown(value)} is not a valid choice. Fix: use one of {', '.join(options)}"
            )
        return str(value)

    return check


def check_boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise vol.Invalid(f"expected true or false, got {shown(value)}. Fix: write true or false")
    return value


def check_pattern(regex: str, what: str) -> Callable[[Any], str]:
    compiled = re.compile(regex)

    def check(value: Any) -> str:
        if not isinstance(value, str) or not compiled.fullmatch(value):
            raise vol.Invalid(f"{shown(value)} is not {what}")
        return value

    return check


def check_path(what: str) -> Callable[[Any], str]:
    """A file path: a string that is not blank, without surrounding whitespace.

    Wrap it in ``check_optional`` when null is allowed; the path is not checked on disk.
    """

    def check(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise vol.Invalid(f"expected a path, got {shown(value)}. Fix: write the path of {what}")
        return value.strip()

    return check


def check_mapping(schema: vol.Schema) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise vol.Invalid(
                f"expected a mapping of options, got {shown(value)}. Fix: indent "
                "the options under this key, or remove the key"
            )
        return schema(value)

    return check


def check_optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def wrapped(value: Any) -> Any:
        return None if value is None else check(value)

    return wrapped


# --- sections ---------------------------------------------------------------------------


class Section:
    """Mixin: a frozen dataclass whose fields carry a ``check`` validator in metadata."""

    @classmethod
    def schema(cls) -> dict[Any, Any]:
        """The voluptuous mapping for this section, defaults taken from the dataclass."""
        out: dict[Any, Any] = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if "section" in f.metadata:
                sub: type[Section] = f.metadata["section"]
                out[vol.Optional(f.name, default=dict)] = check_mapping(vol.Schema(sub.schema()))
            else:
                default = f.default if f.default is not dataclasses.MISSING else None
                out[vol.Optional(f.name, default=default)] = f.metadata["check"]
        return out

    @classmethod
    def from_validated(cls, data: Mapping[str, Any] | None) -> Self:
        """Build the dataclass from a dict the schema has already validated."""
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            value = (data or {}).get(f.name)
            if "section" in f.metadata:
                value = f.metadata["section"].from_validated(value)
            kwargs[f.name] = value
        return cls(**kwargs)


def option(default: Any, check: Callable[[Any], Any], doc: str) -> Any:
    return field(default=default, metadata={"check": check, "doc": doc})


def subsection(cls: type[Section]) -> Any:
    return field(default_factory=cls, metadata={"section": cls})
