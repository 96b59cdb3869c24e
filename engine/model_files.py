"""Which embedding model and tokenizer files a config means: its paths, or the bundled ones."""

from __future__ import annotations

from pathlib import Path

from engine.embed import default_model_path, default_tokenizer_path
from papersift.config import Config
from papersift.errors import ConfigError


def resolve_model_files(config: Config) -> tuple[Path, Path]:
    """The ``(model, tokenizer)`` paths of ``[embedding]``: empty means the bundled file, a
    relative path is resolved against the config file's directory. Raises
    :class:`ConfigError` for a model without its tokenizer (a bundled tokenizer would
    silently produce vectors of another space)."""
    e = config.embedding
    if e.model and not e.tokenizer:
        raise ConfigError("config: [embedding] tokenizer must be set with model")
    model = _configured(config, e.model) if e.model else default_model_path()
    tokenizer = _configured(config, e.tokenizer) if e.tokenizer else default_tokenizer_path()
    return model, tokenizer


def _configured(config: Config, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else config.base_dir / path
