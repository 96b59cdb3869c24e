"""Setting values with rules of their own: cron expressions, ROR ids, ORCID iDs and the
``[lab] members`` tables. Each parser takes (name, raw value, from the environment) and
returns the value or raises a one-line :class:`ConfigError` naming the setting."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from papersift.core.errors import ConfigError

_ORCID = re.compile(r"^(?:https?://orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])/?$", re.I | re.A)
_ROR = re.compile(r"^(?:https?://ror\.org/)?(0[a-hj-km-np-tv-z0-9]{6})([0-9]{2})/?$", re.I | re.A)
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def parse_orcid(text: str) -> str | None:
    """``https://orcid.org/0000-0002-1825-0097`` -> ``0000-0002-1825-0097`` if its ISO 7064
    11,2 check character is right; None otherwise."""
    m = _ORCID.match(text.strip())
    if m is None:
        return None
    digits = m.group(1).upper().replace("-", "")
    total = 0
    for d in digits[:-1]:
        total = (total + int(d)) * 2
    check = (12 - total % 11) % 11
    return m.group(1).upper() if digits[-1] == ("X" if check == 10 else str(check)) else None


def parse_lab_ror(text: str) -> str | None:
    """A bare lower-case ROR id (``03acrzv41``; the ror.org URL works too) if its format and
    its ISO 7064 97-10 check digits are right; None otherwise."""
    m = _ROR.match(text.strip())
    if m is None:
        return None
    n = 0
    for c in m.group(1).lower():
        n = n * 32 + _CROCKFORD.index(c)
    return (m.group(1) + m.group(2)).lower() if 98 - (n * 100) % 97 == int(m.group(2)) else None


@dataclass(frozen=True)
class LabMember:
    name: str
    orcid: str  # bare, upper-case check character


def parse_members(name: str, raw: Any, from_env: bool) -> tuple[LabMember, ...]:
    """``[[lab.members]]`` tables (or, from the environment, the same as a JSON array)."""
    if from_env:
        try:
            raw = json.loads(str(raw))
        except ValueError:
            raise ConfigError(
                f'config: {name} must be a JSON array such as [{{"name": "Jane Doe", '
                f'"orcid": "0000-0002-1825-0097"}}], got {raw!r}'
            ) from None
    if not isinstance(raw, list):
        raise ConfigError(f"config: {name} must be an array of tables ([[lab.members]])")
    out: list[LabMember] = []
    for i, entry in enumerate(raw, 1):
        where = f"{name} #{i}"
        if not isinstance(entry, dict) or set(entry) != {"name", "orcid"}:
            keys = sorted(entry) if isinstance(entry, dict) else entry
            raise ConfigError(f"config: {where} must have exactly name and orcid, got {keys!r}")
        person, orcid = entry["name"], entry["orcid"]
        if not isinstance(person, str) or not person.strip():
            raise ConfigError(f"config: {where} name must be a non-empty string, got {person!r}")
        bare = parse_orcid(orcid) if isinstance(orcid, str) else None
        if bare is None:
            raise ConfigError(
                f"config: {where} orcid must be an ORCID iD such as 0000-0002-1825-0097 "
                f"(with a valid check character), got {orcid!r}"
            )
        if any(m.orcid == bare for m in out):
            raise ConfigError(f"config: {where} orcid {bare} is declared twice")
        out.append(LabMember(" ".join(person.split()), bare))
    return tuple(out)


def parse_cron(name: str, raw: Any, from_env: bool) -> str:
    """A 5-field cron expression (UTC) as cron reads it (``core.cron``), or "" (the job is
    off)."""
    if not isinstance(raw, str):
        raise ConfigError(f"config: {name} must be a string, got {raw!r}")
    expr = raw.strip()
    if expr:
        from papersift.core.cron import cron_trigger  # APScheduler only when a job is on

        try:
            cron_trigger(expr)
        except ValueError as exc:
            raise ConfigError(
                f"config: {name} must be a cron expression of 5 fields such as "
                f"`0 3 * * 1-5`, got {raw!r} ({exc})"
            ) from None
    return expr


def parse_ror(name: str, raw: Any, from_env: bool) -> str:
    """A bare ROR id (``03acrzv41``) from the id or its URL, or ""."""
    if not isinstance(raw, str):
        raise ConfigError(f"config: {name} must be a string, got {raw!r}")
    if not raw.strip():
        return ""
    bare = parse_lab_ror(raw)
    if bare is None:
        raise ConfigError(
            f"config: {name} must be a ROR id such as 03acrzv41 (with valid check digits), "
            f"got {raw!r}"
        )
    return bare


def parse_http_url(name: str, raw: Any, from_env: bool) -> str:
    """An http(s) URL with a host: a fetch of anything else fails every time, and retrying
    it only made a command wait ~90 s before saying so."""
    if not isinstance(raw, str):
        raise ConfigError(f"config: {name} must be a string, got {raw!r}")
    url = raw.strip()
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(
            f"config: {name} must be an http:// or https:// URL such as "
            f"https://export.arxiv.org/oai2, got {raw!r}"
        )
    return url


def parse_http_url_or_empty(name: str, raw: Any, from_env: bool) -> str:
    """``parse_http_url``, or "" (the setting's off or unset value)."""
    if isinstance(raw, str) and not raw.strip():
        return ""
    return parse_http_url(name, raw, from_env)


ADMIN_TOKEN_MIN = 16  # characters: with sign-in throttled, a random one is out of reach
SECRET_KEY_MIN = 32  # characters, as the generated secret.key must have: a short key that
# signs session cookies could be found offline from one cookie, and any session forged


def _secret(name: str, raw: Any, minimum: int, advice: str) -> str:
    """A secret setting: empty, or at least ``minimum`` characters (else one line ending in
    ``advice``)."""
    if not isinstance(raw, str):
        raise ConfigError(f"config: {name} must be a string, got {type(raw).__name__}")
    value = raw.strip()
    if value and len(value) < minimum:
        raise ConfigError(
            f"config: {name} must be at least {minimum} characters, got {len(value)}; {advice}"
        )
    return value


def parse_admin_token(name: str, raw: Any, from_env: bool) -> str:
    """The admin token: empty (admin actions off) or at least ``ADMIN_TOKEN_MIN`` characters,
    since it is the one password of the admin page and API."""
    advice = "make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(24))'"
    return _secret(name, raw, ADMIN_TOKEN_MIN, advice)


def parse_secret_key(name: str, raw: Any, from_env: bool) -> str:
    """The key that signs session cookies: empty (one is generated) or at least
    ``SECRET_KEY_MIN`` characters."""
    advice = (
        "leave it empty to have one generated, or make one with: python3 -c 'import secrets; "
        "print(secrets.token_urlsafe(48))'"
    )
    return _secret(name, raw, SECRET_KEY_MIN, advice)


def parse_data_dir(name: str, raw: Any, from_env: bool) -> str:
    """The data directory; empty is refused: it would be the folder a command runs in, and
    an import would fill it (or the config's folder) with the store and indexes."""
    if not isinstance(raw, str):
        raise ConfigError(f"config: {name} must be a string, got {type(raw).__name__}")
    if not raw.strip():
        raise ConfigError(
            f"config: {name} is empty; give the data directory's path (e.g. "
            "/var/lib/papersift/data), or leave it unset for ./papersift-data"
        )
    return raw.strip()


def parse_host(name: str, raw: Any, from_env: bool) -> str:
    """An address to listen on; empty is refused: uvicorn read it as every address."""
    if not isinstance(raw, str):
        raise ConfigError(f"config: {name} must be a string, got {raw!r}")
    host = raw.strip()
    if not host:
        raise ConfigError(
            f"config: {name} must not be empty; to listen on every address, set it to "
            "0.0.0.0 explicitly"
        )
    return host
