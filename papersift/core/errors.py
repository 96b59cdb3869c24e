"""Typed errors that the CLI and the web app turn into one clear line or a 4xx."""

from __future__ import annotations

import tempfile
from pathlib import Path


class PapersiftError(Exception):
    """Base of every error the project raises on purpose."""


class ConfigError(PapersiftError):
    """A config file, key or value is wrong; the message names it."""


class IndexVersionError(PapersiftError):
    """The data directory was built by an incompatible version or another model."""


class QueryError(PapersiftError):
    """A search request cannot be answered as asked (bad filter, page past the window)."""


class WindowError(QueryError):
    """A page past the result window of a list that runs on past it (a list that ends
    sooner answers the empty page after its last instead: ``engine.list_page``)."""


class ImportFormatError(PapersiftError):
    """An input file cannot be read at all (unknown compression, not JSON lines)."""


class DataDirError(PapersiftError):
    """The data directory cannot be created or written (a bad path, no permission), or a
    file of it is missing or damaged (the message says how to repair it)."""


def make_data_dir(root: Path) -> None:
    """Create the data directory (and its parents), or say in one line why it cannot be."""
    if root.exists() and not root.is_dir():
        raise not_a_folder(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DataDirError(
            f"cannot create the data directory {root}: {reason} "
            "(set [data] dir in config.toml or PAPERSIFT_DATA_DIR)"
        ) from None


def not_a_folder(root: Path) -> DataDirError:
    """The error for a data directory path that names a file."""
    return DataDirError(
        f"the data directory {root} is a file, not a folder "
        "(set [data] dir in config.toml or PAPERSIFT_DATA_DIR)"
    )


def unwritable(root: Path) -> str | None:
    """Why the folder ``root`` cannot be written to (the system's reason), or None if it can.

    Tried with a temporary file, as a write would be."""
    try:
        with tempfile.NamedTemporaryFile(dir=root, prefix=".papersift-probe-"):
            pass
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


# What to do about a data directory that is not writable (the CLI's line and doctor's row).
WRITE_ACCESS = (
    "give the user running papersift write access to it (chown -R USER {root}) or mount it "
    "read-write"
)


def not_writable(root: Path, reason: str) -> DataDirError:
    """The error for a data directory papersift cannot write to: even reading needs that
    (SQLite keeps the store's shared-memory file beside it)."""
    return DataDirError(
        f"the data directory {root} is not writable ({reason}): " + WRITE_ACCESS.format(root=root)
    )
