"""What an unknown name in ``config.toml`` or a ``PAPERSIFT_*`` variable most likely meant,
as the end of ``core.config_load``'s one-line error ("did you mean page_size?").

A key can be a setting of more than one section (``port`` of ``[server]`` and ``[mail]``),
so a variable without its section (``PAPERSIFT_<KEY>``) is answered with every setting of
that key, ``[server]``'s first: a bare port far more likely means the one ``serve`` listens
on than the SMTP server's (difflib alone offered ``PAPERSIFT_MAIL_PORT``, the shorter name).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from papersift.core.config import iter_settings, sections

ENV_PREFIX = "PAPERSIFT_"
# The section a key most likely belongs to when several have it.
PREFERRED_SECTION = "server"
# difflib ratios a key must reach to be offered: looser in the section it was written in
# (`mode` is [search] default_mode, 0.5), stricter in another (`delay` is no [embedding]
# model, 0.6).
OWN_CUTOFF = 0.5
OTHER_CUTOFF = 0.75


def env_variable(section: str, key: str) -> str:
    """The environment variable of a setting: ``PAPERSIFT_<SECTION>_<KEY>``."""
    return f"{ENV_PREFIX}{section}_{key}".upper()


def sections_of(key: str) -> list[str]:
    """The sections with a setting ``key``: ``[server]`` first, then in file order."""
    found = [section for section, k, _, _ in iter_settings() if k == key]
    return sorted(found, key=lambda section: section != PREFERRED_SECTION)  # stable


def _one_of(names: Iterable[str], last: str = "or") -> str:
    """``A``, ``A or B``, ``A, B or C``."""
    items = list(names)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def _closest(name: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """``name`` if it is one of ``choices``; else the one choice it begins as a whole word
    (``delay`` of ``delay_seconds``); else the closest by difflib's ratio, if ``cutoff``."""
    options = sorted(set(choices))
    if name in options:
        return name
    longer = [c for c in options if c.startswith(f"{name}_")]
    if len(longer) == 1:
        return longer[0]
    found = difflib.get_close_matches(name, options, n=1, cutoff=cutoff)
    return found[0] if found else None


def variable_hint(name: str, others: Iterable[str]) -> str:
    """The end of the error for the unknown variable ``name``: what it most likely meant
    among the settings' variables and ``others`` (the project's variables that are none)."""
    stem = name.removeprefix(ENV_PREFIX).lower()
    keys = {key for _, key, _, _ in iter_settings()}
    if not any(stem.startswith(f"{section}_") for section, _ in sections()):
        # PAPERSIFT_<SECTON>_<KEY>: a misspelt section before one of its keys.
        for section, _ in sections():
            head, _, rest = stem.partition("_")
            own = [k for s, k, _, _ in iter_settings() if s == section]
            if rest and _closest(head, [section], OTHER_CUTOFF) and rest in own:
                return f"did you mean {env_variable(section, rest)}?"
        # PAPERSIFT_<KEY>: that key (or the closest) in every section that has it.
        key = _closest(stem, keys)
        if key is not None:
            return f"did you mean {_one_of(env_variable(s, key) for s in sections_of(key))}?"
    # Compared without the prefix every name shares, which would make all look close.
    known = {env_variable(s, k) for s, k, _, _ in iter_settings()} | set(others)
    stems = {k.removeprefix(ENV_PREFIX).lower(): k for k in known}
    close = _closest(stem, stems)
    if close is not None:
        return f"did you mean {stems[close]}?"
    return "settings are PAPERSIFT_<SECTION>_<KEY> as listed in config.toml"


def key_hint(section: str, key: str) -> str:
    """The end of the error for ``key``, unknown in ``[section]`` of the config file: the
    closest key of this section and the sections ``key`` is a setting of; else the closest
    key of another section; else this section's keys."""
    own = sorted(k for s, k, _, _ in iter_settings() if s == section)
    close = _closest(key, own, OWN_CUTOFF)
    elsewhere = [f"[{s}]" for s in sections_of(key) if s != section]
    where = f"{key} is a setting of {_one_of(elsewhere, 'and')}" if elsewhere else ""
    if close is not None:  # `[server] url`: base_url, though [harvest] has a url
        return f"; did you mean {close}?" + (f" ({where})" if where else "")
    if where:
        return f"; {where}"
    close = _closest(key, (k for s, k, _, _ in iter_settings() if s != section), OTHER_CUTOFF)
    if close is not None:
        return f"; did you mean {_one_of(f'[{s}] {close}' for s in sections_of(close))}?"
    return f" (known: {', '.join(own)})"


def section_hint(name: str, value: object) -> str:
    """The error for ``name``, no section of the config file: a setting written above every
    section (``page_size = 10``) is told its section, a typo the closest one."""
    if not isinstance(value, dict) and sections_of(name):
        where = _one_of(f"[{s}]" for s in sections_of(name))
        return f"config: {name} must be under its section, {where}"
    names = [s for s, _ in sections()]
    close = _closest(name, names)
    hint = f"; did you mean [{close}]?" if close else f" (known: {', '.join(names)})"
    return f"config: unknown section [{name}]{hint}"
