"""What the ``papersift`` commands share: the config a command line names, the argument
types argparse checks (a bad value is argparse's one-line error), the data directory opened
to write, and JSON output."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papersift.core.config import Config
from papersift.core.config_load import load_config

if TYPE_CHECKING:
    from papersift.engine.datadir import DataDir


def config_path(args: argparse.Namespace) -> str | None:
    """``--config``, else ``PAPERSIFT_CONFIG``, else ./config.toml if there is one (None:
    the defaults)."""
    path: str | None = args.config or os.environ.get("PAPERSIFT_CONFIG")
    if path is None and Path("config.toml").is_file():
        path = "config.toml"
    return path


def config_of(args: argparse.Namespace) -> Config:
    """The config the command line names (``config_path``)."""
    return load_config(config_path(args))


@contextmanager
def writing_to(config: Config, command: str, *, create: bool = True) -> Iterator[DataDir]:
    """The data directory opened for ``papersift COMMAND`` to write, under its writer lock
    (one writer at a time; a second is told who holds it). A command opens it once its
    arguments are checked, so one refused creates nothing; ``create=False``: it must hold
    an index already (``index``, ``reindex``, ``enrich``)."""
    from papersift.engine.datadir import DataDir, check_root
    from papersift.engine.writer_lock import writer_lock

    check_root(config.data_dir, create=create)
    lock = writer_lock(config.data_dir, f"`papersift {command}`")
    with lock, DataDir(config, create=create) as data:
        yield data


def full_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def partial_date(text: str, *, end: bool) -> date:
    from papersift.core.dates import DATE_FORMS, parse_partial_date

    try:
        return parse_partial_date(text.strip(), end=end)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date such as {DATE_FORMS}: {text!r}") from None


def date_from(text: str) -> date:
    """``--from``: as the web's ``from``, ``2020`` is 2020-01-01."""
    return partial_date(text, end=False)


def date_to(text: str) -> date:
    """``--to``: as the web's ``to``, ``2020`` is 2020-12-31."""
    return partial_date(text, end=True)


def port_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535: {text!r}")
    return value


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1: {text!r}")
    return value


def print_json(data: Any) -> None:
    """``data`` (builtins or msgspec Structs) as indented UTF-8 JSON on stdout."""
    import msgspec

    sys.stdout.write(msgspec.json.format(msgspec.json.encode(data), indent=2).decode() + "\n")
