"""The ROR registry: organisations read from its dump (schema v2 JSON lines), and ROR ids.

Matching affiliation strings to them is ``engine.ror_match``.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papersift.core.records import cut, repair_text

log = logging.getLogger(__name__)

ROR_PREFIX = "https://ror.org/"
# Bounds where a ROR record enters (issue 24): real names are under 300 characters and real
# records hold at most a few dozen names; a longer one is cut, the rest of the list dropped.
MAX_NAME = 500
MAX_NAMES = 100
_ROR_ID = re.compile(r"^(?:https?://ror\.org/)?(0[a-hj-km-np-tv-z0-9]{6}[0-9]{2})/?$", re.I)


def parse_ror_id(text: str) -> str | None:
    """``https://ror.org/03acrzv41`` or ``03acrzv41`` -> ``03acrzv41``; None otherwise."""
    m = _ROR_ID.match(text.strip())
    return m.group(1).lower() if m else None


@dataclass(frozen=True, slots=True)
class Organisation:
    ror_id: str  # the bare id, "03acrzv41"
    name: str
    aliases: tuple[str, ...]
    acronyms: tuple[str, ...]
    country: str
    city: str
    types: tuple[str, ...]
    status: str
    parents: tuple[str, ...] = ()


def read_ror(path: Path, skipped: list[str] | None = None) -> Iterator[Organisation]:
    """Organisations from a ROR v2 dump (JSON lines or a JSON array, plain or .gz); a line
    that is no JSON, or a record that is no organisation, is logged, added to ``skipped``
    ("record N: reason") and skipped."""
    out = skipped if skipped is not None else []

    def skip(what: str) -> None:
        log.warning("ror: skipped %s", what)
        out.append(what)

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        first = fh.read(1)
        fh.seek(0)
        records: Iterable[Any] = json.load(fh) if first == "[" else _json_lines(fh, skip)
        for n, rec in enumerate(records, start=1):
            try:
                org = _organisation(rec) if isinstance(rec, dict) else None
            except (AttributeError, TypeError, ValueError) as exc:
                skip(f"record {n}: {exc}")
                continue
            if org is None:
                shown = repr(rec.get("id"))[:60] if isinstance(rec, dict) else type(rec).__name__
                skip(f"record {n}: id: {shown} is not a ROR id")
                continue
            yield org


def _json_lines(lines: Iterable[str], skip: Callable[[str], None]) -> Iterator[Any]:
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as exc:
            skip(f"line {n}: invalid JSON ({exc.msg})")


def _organisation(rec: dict[str, Any]) -> Organisation | None:
    ror_id = parse_ror_id(str(rec.get("id", "")))
    if ror_id is None:
        return None
    names = rec.get("names") or []
    display, aliases, acronyms = "", [], []
    for n in names[:MAX_NAMES] if isinstance(names, list) else []:
        value, types = cut(str(n.get("value", "")), MAX_NAME), n.get("types") or []
        if "ror_display" in types:
            display = value
        if "acronym" in types:
            acronyms.append(value)
        elif value:
            aliases.append(value)
    locations = rec.get("locations") or []
    geo = (
        locations[0].get("geonames_details", {})
        if isinstance(locations, list) and locations
        else {}
    )
    rels = rec.get("relationships") or []
    parents = tuple(
        p for r in rels if isinstance(r, dict) and r.get("type") == "parent"
        if (p := parse_ror_id(str(r.get("id", "")))) is not None
    )  # fmt: skip
    r = repair_text  # a lone surrogate from a JSON escape cannot be stored
    return Organisation(
        ror_id,
        r(display or (aliases[0] if aliases else ror_id)),
        tuple(r(a) for a in aliases if a != display),
        tuple(r(a) for a in acronyms),
        r(cut(str(geo.get("country_name", "")), MAX_NAME)),
        r(cut(str(geo.get("name", "")), MAX_NAME)),
        tuple(r(cut(str(t), MAX_NAME)) for t in (rec.get("types") or [])[:MAX_NAMES]),
        r(cut(str(rec.get("status", "active")), MAX_NAME)),
        parents,
    )
