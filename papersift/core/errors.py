"""Typed errors that the CLI and the web app turn into one clear line or a 4xx."""


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
