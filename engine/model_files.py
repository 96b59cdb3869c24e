"""Which embedding model and tokenizer files a config means: its paths, or the bundled ones."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from papersift.core.config import Config
from papersift.core.errors import ConfigError
from papersift.engine.model_id import default_model_path, default_tokenizer_path


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


@dataclass(frozen=True)
class ModelSpec:
    """Everything that fixes a model's vector space, as plain strings: kept in the store
    for the model queries use (so a config change can keep serving it) and sent to cluster
    workers (which load it themselves). Empty ``model``/``tokenizer``: the bundled files
    of whatever papersift is installed where it is read."""

    model: str = ""
    tokenizer: str = ""
    max_length: int = 256
    model_id: str = ""  # the override of [embedding] model_id, or the derived id once known
    quantize: bool = False  # the int8 graph (engine.quantize): another vector space

    @classmethod
    def of(cls, config: Config) -> ModelSpec:
        """The configured model, paths made absolute."""
        model, tok = resolve_model_files(config)
        e = config.embedding
        return cls(
            str(model) if e.model else "",
            str(tok) if e.tokenizer else "",
            e.max_length,
            e.model_id,
            e.quantize and e.float32_cache,  # the int8 graph is built from the cached one
        )

    def paths(self) -> tuple[Path, Path]:
        return (
            Path(self.model) if self.model else default_model_path(),
            Path(self.tokenizer) if self.tokenizer else default_tokenizer_path(),
        )

    def json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def parse(cls, raw: str | None) -> ModelSpec | None:
        """A spec from :meth:`json`; None for nothing or anything malformed."""
        try:
            value = json.loads(raw) if raw else None
            return cls(**value) if isinstance(value, dict) else None
        except (TypeError, ValueError):
            return None
