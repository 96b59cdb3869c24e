"""The one way a setting is declared: a dataclass field carrying its help text and bounds
(``core.config`` and ``core.config_search`` declare every section with it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any


def setting(
    default: Any,
    help: str,
    *,
    choices: tuple[str, ...] = (),
    minimum: float | None = None,
    maximum: float | None = None,
    parse: Callable[[str, Any, bool], Any] | None = None,
    example: str = "",
) -> Any:
    """A dataclass field that carries its help text and validation bounds. ``parse(name,
    raw, from_env)`` replaces the scalar checks for a value with rules of its own (a cron
    expression, a ROR id, ``[lab] members``); ``example`` is TOML shown, commented, in
    config.toml where the default cannot be written (an array of tables)."""
    meta = {
        "help": help, "choices": choices, "minimum": minimum, "maximum": maximum,
        "parse": parse, "example": example,
    }  # fmt: skip
    return field(default=default, metadata=meta)
