"""The ROR registry: organisations read from its dump (schema v2), and ROR ids.

How the dump file is read (ROR's .zip, JSON lines or a JSON array; plain, .gz or .xz) is
``engine.ror_dump``; matching affiliation strings to the organisations is
``engine.ror_match``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from papersift.core.errors import ImportFormatError
from papersift.core.records import cut, repair_text
from papersift.core.wording import counted
from papersift.engine.ror_dump import FORMATS, NotJson, dump_values

log = logging.getLogger(__name__)

ROR_PREFIX = "https://ror.org/"
# Bounds where a ROR record enters (issue 24): real names are under 300 characters and real
# records hold at most a few dozen names; a longer one is cut, the rest of the list dropped.
MAX_NAME = 500
MAX_NAMES = 100
# Skipped records logged one by one; past these, only counted (one summary line at the end).
MAX_LOGGED = 10
_END = object()  # what a dump of no records gives as its first
_JSON_KINDS = {"int": "number", "float": "number", "str": "string", "list": "array",
               "bool": "boolean", "NoneType": "null"}  # fmt: skip
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
    """Organisations from a ROR schema v2 dump: ROR's .zip as Zenodo ships it, or its JSON
    (a JSON array or JSON lines), plain, .gz or .xz.

    The file is opened and its first record checked at once: a file that is no ROR data
    (an HTML page, an arXiv snapshot, ROR's schema v1) raises ImportFormatError before
    anything is read from it. A later line that is no JSON, or record that is no
    organisation, is added to ``skipped`` ("record N: reason") and skipped; the first
    ``MAX_LOGGED`` are logged, then how many in all. Damaged compressed data or a JSON
    array that stops parsing raises ImportFormatError when reading reaches it.
    """
    values = dump_values(path)
    try:
        first = next(values, _END)
        _check_first(path, first)
    except BaseException:
        values.close()
        raise
    return _organisations(chain([first], values), [] if skipped is None else skipped)


def _check_first(path: Path, first: object) -> None:
    """Refuse a file whose first record is no ROR organisation: as ``papersift import``
    refuses what is no snapshot, rather than skip every record of a wrong file."""
    if first is _END:
        raise ImportFormatError(f"{path} holds no records; import-ror reads {FORMATS}")
    if isinstance(first, NotJson):
        raise ImportFormatError(
            f"{path} is not ROR data: {first.where} is not JSON; import-ror reads {FORMATS}"
        )
    rec: dict[str, Any] = first if isinstance(first, dict) else {}
    ror_id = parse_ror_id(str(rec.get("id", "")))
    if ror_id is not None and isinstance(rec.get("names"), list):
        return
    if ror_id is not None and "name" in rec:
        raise ImportFormatError(
            f"{path} is ROR schema v1; import-ror reads schema v2: in ROR's .zip (which it "
            "reads as it is) the file whose name ends in _schema_v2.json"
        )
    what = (
        f"id {str(rec['id'])[:40]!r}" if "id" in rec
        else "no id" if isinstance(first, dict)
        else f"a JSON {_JSON_KINDS.get(type(first).__name__, type(first).__name__)}"
    )  # fmt: skip
    raise ImportFormatError(
        f"{path} is not ROR data: its first record ({what}) is no ROR organisation (a ROR "
        f"id and names); import-ror reads {FORMATS}"
    )


def _organisations(values: Iterator[Any], out: list[str]) -> Iterator[Organisation]:
    skips = 0

    def skip(what: str) -> None:
        nonlocal skips
        skips += 1
        out.append(what)
        if skips <= MAX_LOGGED:
            log.warning("ror: skipped %s", what)

    n = 0
    for rec in values:
        if isinstance(rec, NotJson):
            skip(f"{rec.where}: {rec.reason}")
            continue
        n += 1
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
    if skips > MAX_LOGGED:
        log.warning("ror: skipped %s in all (the first %d logged)", counted(skips, "record"),
                    MAX_LOGGED)  # fmt: skip


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
