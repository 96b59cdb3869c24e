"""Typed errors that the CLI and the web app turn into one clear line or a 4xx."""

from __future__ import annotations

from pathlib import Path


class PapersiftError(Exception):
    """Base of every error the project raises on purpose."""


class ConfigError(PapersiftError):
    """A config file, key or value is wrong; the message names it."""


class IndexVersionError(PapersiftError):
    """The data directory was built by an incompatible version or another model."""


class QueryError(PapersiftError):
    """A search request cannot be answered as asked (bad filter, page past the window)."""


class ImportFormatError(PapersiftError):
    """An input file cannot be read at all (unknown compression, not JSON lines)."""


class DataDirError(PapersiftError):
    """The data directory cannot be created or written (a bad path, no permission), or a
    file of it is missing or damaged (the message says how to repair it)."""


def make_data_dir(root: Path) -> None:
    """Create the data directory (and its parents), or say in one line why it cannot be."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DataDirError(
            f"cannot create the data directory {root}: {reason} "
            "(set [data] dir in config.toml or PAPERSIFT_DATA_DIR)"
        ) from None
