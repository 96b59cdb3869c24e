"""Institutions from the ROR registry, stored next to the papers with stable numeric ids.

An institution's id is assigned once per ROR id (AUTOINCREMENT, never reused); re-importing
a newer registry dump updates names and places in place.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sized
from dataclasses import dataclass
from itertools import islice

import msgspec

from papersift.core.paper import Paper
from papersift.engine.enrichment import AFFILIATIONS_KEY
from papersift.engine.ror import Organisation
from papersift.engine.ror_match import normalise
from papersift.engine.store import PaperStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS institutions (
    iid INTEGER PRIMARY KEY AUTOINCREMENT,
    ror_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    key TEXT NOT NULL,
    country TEXT NOT NULL,
    city TEXT NOT NULL,
    types TEXT NOT NULL,
    aliases TEXT NOT NULL,
    parents TEXT NOT NULL,
    status TEXT NOT NULL,
    match_keys TEXT  -- JSON: papersift.engine.ror_match.match_keys (name and aliases, normalised)
);
CREATE TABLE IF NOT EXISTS institution_names (
    key TEXT NOT NULL, iid INTEGER NOT NULL, PRIMARY KEY (key, iid)
) WITHOUT ROWID;
-- Replacing an organisation's names looks them up by iid: without this index every import
-- scanned the whole table once per organisation (36k organisations: 444 s). Stores made
-- before it get it when next opened (CREATE INDEX IF NOT EXISTS: one pass over the table).
CREATE INDEX IF NOT EXISTS institution_names_iid ON institution_names(iid);
CREATE TABLE IF NOT EXISTS affiliations (
    docid INTEGER NOT NULL, position INTEGER NOT NULL, ror_id TEXT NOT NULL,
    PRIMARY KEY (docid, position, ror_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS affiliations_ror ON affiliations(ror_id);
"""
_COLUMNS = "iid, ror_id, name, country, city, types, aliases, parents, status"
# The institutions a sitemap lists: not withdrawn, and with a paper of this index. The whole
# registry is ~120k organisations, nearly all of them a page with no paper here: no page to
# invite a crawler to (the page itself still answers, for a link from an affiliation).
_IN_SITEMAP = (
    "status != 'withdrawn' AND EXISTS (SELECT 1 FROM affiliations a "
    "WHERE a.ror_id = institutions.ror_id)"
)
IMPORT_BATCH = 2000  # organisations per round of executemany
VERSION_KEY = "institutions_version"  # in the store's meta table


def _batches(items: Iterable[Organisation], size: int) -> Iterator[list[Organisation]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def _write_batch(db: sqlite3.Connection, batch: list[Organisation]) -> None:
    """Upsert the organisations, then replace their name keys: a few statements per batch,
    each an index lookup per row, so the cost per organisation stays flat."""
    latest = {org.ror_id: org for org in batch}  # a dump naming an id twice: the last wins
    keys: dict[str, set[str]] = {}  # every name, alias and acronym, normalised once
    rows = []
    for org in latest.values():
        norm = {x: normalise(x) for x in (org.name, *org.aliases, *org.acronyms)}
        keys[org.ror_id] = set(norm.values()) - {""}
        matching = sorted({norm[x] for x in (org.name, *org.aliases)} - {""})  # = match_keys
        rows.append(
            (
                org.ror_id,
                org.name,
                norm[org.name],
                org.country,
                org.city,
                json.dumps(list(org.types)),
                json.dumps([*org.aliases, *org.acronyms], ensure_ascii=False),
                json.dumps(list(org.parents)),
                org.status,
                json.dumps(matching, ensure_ascii=False),
            )
        )
    db.executemany(
        "INSERT INTO institutions (ror_id, name, key, country, city, types, aliases, "
        "parents, status, match_keys) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(ror_id) DO "
        "UPDATE SET name=excluded.name, key=excluded.key, country=excluded.country, "
        "city=excluded.city, types=excluded.types, aliases=excluded.aliases, "
        "parents=excluded.parents, status=excluded.status, match_keys=excluded.match_keys",
        rows,
    )
    ids = list(latest)
    iids = dict(
        db.execute(f"SELECT ror_id, iid FROM institutions WHERE ror_id IN ({_marks(ids)})", ids)
    )
    db.execute(f"DELETE FROM institution_names WHERE iid IN ({_marks(iids)})", list(iids.values()))
    db.executemany(
        "INSERT OR IGNORE INTO institution_names (key, iid) VALUES (?, ?)",
        [(key, iids[rid]) for rid, names in keys.items() for key in names],
    )


def _marks(items: Sized) -> str:
    return ",".join("?" * len(items))


# An alias that looks like an acronym ("MIT", "CNRS", "U-M"): stores made before
# ``match_keys`` kept aliases and acronyms in one list, so this tells them apart for them. On
# the 35,990-record extract it takes 18,382 of the 20,663 acronyms and 1,462 of the 84k
# aliases; matching ROR's gold set with keys split this way: precision 0.960 (0.962 exact).
_ACRONYM = re.compile(r"^[A-Z0-9][A-Z0-9&.\-]{1,11}$")


def migrate(store: PaperStore) -> None:
    """Bring an older store's institution tables up to this schema, in one transaction:
    the ``match_keys`` column, filled in for the rows it is missing from. Idempotent."""
    with store.reading() as db:
        columns = {str(r[1]) for r in db.execute("PRAGMA table_info(institutions)")}
    if "match_keys" in columns:
        with store.reading() as db:
            if db.execute("SELECT 1 FROM institutions WHERE match_keys IS NULL").fetchone() is None:
                return
    with store.transaction() as db:  # another process may have migrated meanwhile: re-read
        if "match_keys" not in {str(r[1]) for r in db.execute("PRAGMA table_info(institutions)")}:
            db.execute("ALTER TABLE institutions ADD COLUMN match_keys TEXT")
        rows = db.execute(
            "SELECT iid, name, aliases FROM institutions WHERE match_keys IS NULL"
        ).fetchall()
        db.executemany(
            "UPDATE institutions SET match_keys = ? WHERE iid = ?",
            [(json.dumps(_legacy_keys(str(n), str(a)), ensure_ascii=False), i) for i, n, a in rows],
        )


def _legacy_keys(name: str, aliases: str) -> tuple[str, ...]:
    names = [a for a in json.loads(aliases) if not _ACRONYM.match(a)]
    return tuple(sorted({normalise(x) for x in (name, *names)} - {""}))


def affiliations(paper: Paper) -> list[tuple[int, str, str]]:
    """(author position, ROR id, institution name) of a paper, from its enrichment."""
    raw = dict(paper.extra).get(AFFILIATIONS_KEY)
    return [(int(p), str(r), str(n)) for p, r, n in json.loads(raw)] if raw else []


def affiliation_rors(paper: Paper) -> list[str]:
    """The distinct ROR ids of a paper's authors, in author order."""
    return rors_in(dict(paper.extra).get(AFFILIATIONS_KEY))


def rors_in(raw: str | None) -> list[str]:
    """The distinct ROR ids of a paper's stored affiliations (its ``AFFILIATIONS_KEY``
    value), in author order: what the keyword index holds as the paper's institutions."""
    # msgspec's decoder: 2.3 µs a paper against json's 5.7 when the facet table reads them.
    return list(dict.fromkeys(str(r) for _, r, _ in msgspec.json.decode(raw))) if raw else []


@dataclass(frozen=True, slots=True)
class Institution:
    iid: int
    ror_id: str
    name: str
    country: str
    city: str
    types: tuple[str, ...]
    aliases: tuple[str, ...]
    parents: tuple[str, ...]  # ROR ids
    status: str


def _institution(row: tuple[object, ...]) -> Institution:
    iid, ror_id, name, country, city, types, aliases, parents, status = row
    return Institution(
        int(str(iid)),
        str(ror_id),
        str(name),
        str(country),
        str(city),
        tuple(json.loads(str(types))),
        tuple(json.loads(str(aliases))),
        tuple(json.loads(str(parents))),
        str(status),
    )


class Institutions:
    """Read and write the institution tables of one paper store."""

    def __init__(self, store: PaperStore) -> None:
        self.store = store
        with store.reading() as db:
            db.executescript(SCHEMA)
        migrate(store)

    def import_organisations(self, orgs: Iterable[Organisation]) -> int:
        """Insert or update organisations (one transaction, written in batches of
        ``IMPORT_BATCH``); returns how many were read."""
        n = 0
        with self.store.transaction() as db:
            for batch in _batches(orgs, IMPORT_BATCH):
                n += len(batch)
                _write_batch(db, batch)
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE "
                "SET value = CAST(value AS INTEGER) + 1",
                (VERSION_KEY,),
            )
        return n

    def version(self) -> int:
        """Bumped by every import (the matcher cache's validator)."""
        return int(self.store.get_meta(VERSION_KEY) or 0)

    def keyed_organisations(self) -> Iterator[tuple[Organisation, list[str]]]:
        """Every stored organisation with its match keys, for building the matcher."""
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT ror_id, name, country, city, parents, status, match_keys FROM institutions"
            ).fetchall()
        for ror_id, name, country, city, parents, status, keys in rows:
            # Only what the matcher reads: aliases and types stay out (its keys hold them).
            up = () if parents == "[]" else tuple(json.loads(parents))
            org = Organisation(str(ror_id), str(name), (), (), country, city, (), status, up)
            yield org, json.loads(keys or "[]")

    def count(self, listed: bool = False) -> int:
        """Institutions in the registry; ``listed``: only those the pages list (withdrawn
        ones are kept to resolve their ids, not listed)."""
        where = " WHERE status != 'withdrawn'" if listed else ""
        with self.store.reading() as db:
            return int(db.execute(f"SELECT COUNT(*) FROM institutions{where}").fetchone()[0])

    def get(self, iid: int) -> Institution | None:
        with self.store.reading() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM institutions WHERE iid = ?", (iid,)
            ).fetchone()
        return None if row is None else _institution(row)

    def by_ror(self, ror_id: str) -> Institution | None:
        with self.store.reading() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM institutions WHERE ror_id = ?", (ror_id,)
            ).fetchone()
        return None if row is None else _institution(row)

    def by_name(self, name: str) -> list[Institution]:
        """Institutions with this exact name, alias or acronym (after normalisation)."""
        with self.store.reading() as db:
            rows = db.execute(
                f"SELECT {', '.join('i.' + c for c in _COLUMNS.split(', '))} FROM "
                "institution_names n JOIN institutions i USING (iid) WHERE n.key = ? "
                "ORDER BY i.name",
                (normalise(name),),
            ).fetchall()
        return [_institution(r) for r in rows]

    def search(self, query: str, limit: int = 50, offset: int = 0) -> tuple[list[Institution], int]:
        """Institutions whose name contains every word of ``query``, by name."""
        words = normalise(query).split()
        where = " AND ".join(["status != 'withdrawn'"] + ["key LIKE ?"] * len(words))
        args: list[object] = [f"%{w}%" for w in words]
        with self.store.reading() as db:
            total = int(
                db.execute(f"SELECT COUNT(*) FROM institutions WHERE {where}", args).fetchone()[0]
            )
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM institutions WHERE {where} ORDER BY name LIMIT ? OFFSET ?",
                [*args, limit, offset],
            ).fetchall()
        return [_institution(r) for r in rows], total

    def sitemap_chunks(self, size: int) -> list[int]:
        """Each iid range ``[k*size+1, (k+1)*size]`` holding an institution of the sitemap
        (``_IN_SITEMAP``)."""
        with self.store.reading() as db:
            rows = db.execute(
                f"SELECT DISTINCT (iid - 1) / ? FROM institutions WHERE {_IN_SITEMAP} ORDER BY 1",
                (size,),
            ).fetchall()
        return [int(k) for (k,) in rows]

    def sitemap_rows(self, first: int, last: int) -> list[tuple[int, str]]:
        """(iid, name) of the institutions of the sitemap with ids ``first..last``."""
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT iid, name FROM institutions WHERE iid BETWEEN ? AND ? "
                f"AND {_IN_SITEMAP} ORDER BY iid",
                (first, last),
            ).fetchall()
        return [(int(i), str(n)) for i, n in rows]

    def fingerprint(self) -> str:
        """Changes when institutions are added (for cache validators; renames keep it)."""
        with self.store.reading() as db:
            count, top = db.execute("SELECT COUNT(*), MAX(iid) FROM institutions").fetchone()
        return f"{count}-{top}"

    # -- what enrichment linked to an institution ------------------------------------------

    def linked(self, ror_id: str) -> tuple[int, int]:
        """(papers, researchers) with an authorship at this institution."""
        with self.store.reading() as db:
            papers, people = db.execute(
                "SELECT COUNT(DISTINCT f.docid), COUNT(DISTINCT a.rid) FROM affiliations f "
                "JOIN papers p ON p.docid = f.docid LEFT JOIN authorships a "
                "ON a.docid = f.docid AND a.position = f.position WHERE f.ror_id = ?",
                (ror_id,),
            ).fetchone()
        return int(papers), int(people)

    def members(self, ror_id: str, limit: int = 50) -> list[tuple[int, str, int]]:
        """(researcher id, name, papers here) of its researchers, most papers first."""
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT r.rid, r.name, COUNT(DISTINCT f.docid) AS n FROM affiliations f "
                "JOIN papers p ON p.docid = f.docid JOIN authorships a "
                "ON a.docid = f.docid AND a.position = f.position "
                "JOIN researchers r ON r.rid = a.rid WHERE f.ror_id = ? "
                "GROUP BY r.rid ORDER BY n DESC, r.name LIMIT ?",
                (ror_id, limit),
            ).fetchall()
        return [(int(r), str(n), int(c)) for r, n, c in rows]

    def ror_names(self, ror_ids: Iterable[str]) -> dict[str, Institution]:
        """The institutions of these ROR ids that the registry holds."""
        ids = list(dict.fromkeys(ror_ids))
        if not ids:
            return {}
        with self.store.reading() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM institutions WHERE ror_id IN ({','.join('?' * len(ids))})",
                ids,
            ).fetchall()
        return {i.ror_id: i for i in map(_institution, rows)}
