"""Reading the settings (``core.config``) from ``config.toml`` and ``PAPERSIFT_*`` variables.

``load_config`` parses the file once; an unknown key or a bad value raises
:class:`ConfigError` naming it. An environment variable ``PAPERSIFT_<SECTION>_<KEY>``
overrides the file (``PAPERSIFT_DATA_DIR`` sets ``[data] dir``); any other ``PAPERSIFT_*``
variable but those in ``OTHER_VARIABLES`` is an error, as an unknown key is (a typo would
otherwise be ignored without a word); ``core.config_hints`` says what either likely meant.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from papersift.core.config import Config, iter_settings, sections
from papersift.core.config_hints import (
    ENV_PREFIX,
    env_variable,
    key_hint,
    section_hint,
    variable_hint,
)
from papersift.core.errors import ConfigError

# PAPERSIFT_* variables that are not settings: the config file (cli), the optimised model graph
# cache (engine/model_graphs.py), the default [mail] password_env, and the inputs of the
# benchmarks and the browser tests.
OTHER_VARIABLES = frozenset({
    "PAPERSIFT_CONFIG", "PAPERSIFT_MODEL_CACHE", "PAPERSIFT_MAIL_PASSWORD",
    "PAPERSIFT_BENCH_SNAPSHOT", "PAPERSIFT_SCIFACT", "PAPERSIFT_SCREENSHOTS",
})  # fmt: skip
# How an error names a setting's type ("must be an integer").
_KINDS = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _kind(kind: type) -> str:
    return _KINDS.get(kind, f"of type {kind.__name__}")


def _coerce(name: str, raw: Any, kind: type, meta: Mapping[str, Any], from_env: bool) -> Any:
    """Check and convert one value; raise a ConfigError naming the setting."""
    value: Any = raw
    if from_env and kind is not str:
        text = str(raw).strip()
        try:
            if kind is bool:
                if text.lower() not in ("1", "0", "true", "false", "yes", "no"):
                    raise ValueError
                value = text.lower() in ("1", "true", "yes")
            else:
                value = kind(text)
        except ValueError:
            raise ConfigError(f"config: {name} must be {_kind(kind)}, got {raw!r}") from None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"config: {name} must be {_kind(kind)}, got {raw!r}")
    if isinstance(value, float) and not math.isfinite(value):  # nan passes every bound
        raise ConfigError(f"config: {name} must be a finite number, got {raw!r}")
    choices = meta.get("choices") or ()
    if choices and value not in choices:
        raise ConfigError(f"config: {name} must be one of {', '.join(choices)}, got {raw!r}")
    minimum = meta.get("minimum")
    if minimum is not None and value < minimum:
        raise ConfigError(f"config: {name} must be >= {minimum}, got {raw!r}")
    maximum = meta.get("maximum")
    if maximum is not None and value > maximum:
        raise ConfigError(f"config: {name} must be <= {maximum}, got {raw!r}")
    return value


def _build_section(name: str, cls: type, table: Mapping[str, Any], env: Mapping[str, str]) -> Any:
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    for key in table:
        if key not in known:
            raise ConfigError(f"config: unknown key [{name}] {key}{key_hint(name, key)}")
    values: dict[str, Any] = {}
    for key, f in known.items():
        kind = hints[key]
        if isinstance(kind, types.UnionType):  # no optional settings today; keep it strict
            raise TypeError(f"setting {name}.{key} must have a plain type")
        env_name = env_variable(name, key)
        parse = f.metadata.get("parse")
        if parse is not None and env_name in env:
            values[key] = parse(env_name, env[env_name], True)
        elif parse is not None and key in table:
            values[key] = parse(f"[{name}] {key}", table[key], False)
        elif env_name in env:
            values[key] = _coerce(f"{env_name}", env[env_name], kind, f.metadata, True)
        elif key in table:
            values[key] = _coerce(f"[{name}] {key}", table[key], kind, f.metadata, False)
    return cls(**values)


def load_config(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Read the config file (``None``: defaults only) and apply environment overrides."""
    env = os.environ if env is None else env
    table: dict[str, Any] = {}
    base_dir = Path.cwd()
    if path is not None:
        p = Path(path)
        try:
            table = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config: file not found: {p}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config: cannot read {p}: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config: {p} is not valid TOML: {exc}") from None
        base_dir = p.resolve().parent
    names = dict(sections())
    for key, value in table.items():
        if key not in names:
            raise ConfigError(section_hint(key, value))
        if not isinstance(value, dict):
            raise ConfigError(f"config: [{key}] must be a table")
    built = {
        name: _build_section(name, cls, table.get(name, {}), env) for name, cls in names.items()
    }
    defaulted = path is None and env_variable("data", "dir") not in env
    config = Config(**built, base_dir=base_dir, data_dir_defaulted=defaulted)
    _check_variables(env, allowed={config.mail.password_env})
    _check_together(config)
    return config


def _check_together(config: Config) -> None:
    """Settings valid alone that cannot be together (each search would fail on them)."""
    s = config.search
    if s.page_size > s.max_page_size:
        raise ConfigError(
            f"config: [search] page_size ({s.page_size}) must be at most [search] "
            f"max_page_size ({s.max_page_size})"
        )
    e = config.embedding
    # quantize without float32_cache is allowed: turning the cache off is how a corpus goes
    # back to the plain model, its int8 vectors serving queries until re-embedded.
    if e.model and not e.tokenizer:  # the bundled tokenizer would make vectors of another space
        raise ConfigError("config: [embedding] tokenizer must be set with model")


def _check_variables(env: Mapping[str, str], allowed: set[str]) -> None:
    """Refuse a ``PAPERSIFT_*`` variable that is no setting, naming what it likely meant."""
    known = {env_variable(section, key) for section, key, _, _ in iter_settings()}
    known |= OTHER_VARIABLES
    for name in sorted(env):
        if name.startswith(ENV_PREFIX) and name not in known and name not in allowed:
            hint = variable_hint(name, OTHER_VARIABLES)
            raise ConfigError(f"config: unknown environment variable {name}; {hint}")
