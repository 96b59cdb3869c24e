"""The citation graph: each enriched paper's references and citers as its sources list them,
resolved to papers of this index when they read.

A source (OpenAlex, Semantic Scholar) describes a paper's references, and Semantic Scholar
also the papers citing it, as works with identifiers (``openalex:W...``, ``doi:10...``,
``arxiv:2401.10241``, ``s2:...``, ``mag:...``). They are stored as the source gave them,
replaced as a whole when that source enriches the paper again, and resolved when read: a
key names a paper here if it is the paper's arXiv id, its DOI, or an id a source gave that
paper when it was enriched. So a paper imported or enriched later joins the graph without
rewriting anyone's edges, a deleted one leaves it (its own rows go with it, in the store's
delete transaction: SQLite may give its docid to the next paper added), and both directions
read the same rows (``references(a)`` holds ``b`` exactly when ``citations(b)`` holds ``a``).

Docids stay across arXiv versions (the store updates a row in place), so edges survive a
new version as the rest of the enrichment does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from papersift.engine.sql_batches import in_batches
from papersift.engine.store import PaperStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS work_keys (
    scheme TEXT NOT NULL, value TEXT NOT NULL, docid INTEGER NOT NULL,
    PRIMARY KEY (scheme, value, docid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS work_keys_docid ON work_keys(docid);
-- kind 'ref': owner cites the work; 'citer': the work cites owner. n numbers the works of
-- one (owner, source, kind); a work with no identifier still has a row (scheme '').
CREATE TABLE IF NOT EXISTS links (
    owner INTEGER NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL, n INTEGER NOT NULL,
    scheme TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (owner, source, kind, n, scheme, value)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_key ON links(scheme, value, kind);
"""
VERSION_KEY = "graph_version"  # store meta: bumped by every write that changes an edge
KINDS = ("ref", "citer")
Key = tuple[str, str]  # (scheme, value): ("arxiv", "2401.10241"), ("doi", "10.1/x")


@dataclass(frozen=True, slots=True)
class WorkLinks:
    """What one source says about one paper's place in the graph. ``references`` or
    ``citers`` None: the source did not say (the edges it gave before are kept)."""

    source: str
    keys: tuple[Key, ...]  # the paper's own identifiers at this source
    references: tuple[tuple[Key, ...], ...] | None
    citers: tuple[tuple[Key, ...], ...] | None = None


@dataclass(frozen=True, slots=True)
class GraphCounts:
    references: int  # references the sources list (the longest list of one source)
    references_here: int  # of which papers in this index
    citations_here: int  # papers in this index that cite it

    @property
    def empty(self) -> bool:
        return not (self.references or self.references_here or self.citations_here)


class Graph:
    """Reads and writes the graph tables of one store; safe to share across threads."""

    def __init__(self, store: PaperStore) -> None:
        self.store = store
        with store.reading() as db:
            db.executescript(SCHEMA)
        self.generation = self._version()
        if _forget not in store.on_delete:
            store.on_delete.append(_forget)

    def _version(self) -> str:
        return self.store.get_meta(VERSION_KEY) or "0"

    @property
    def enriched(self) -> bool:
        """Whether any source's links were ever stored (``papersift enrich``)."""
        return self.generation != "0"

    def refresh(self) -> bool:
        """See writes of another process; returns whether there were any."""
        now = self._version()
        changed, self.generation = now != self.generation, now
        return changed

    # -- writing -------------------------------------------------------------------------

    def replace(self, docid: int, links: Iterable[WorkLinks]) -> bool:
        """Store what these sources say about ``docid`` in one transaction, replacing what
        each said before; returns whether anything changed."""
        changed = False
        with self.store.transaction() as db:
            for w in links:
                changed |= _replace_one(db, docid, w)
            if changed:
                db.execute(
                    "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE "
                    "SET value = CAST(value AS INTEGER) + 1",
                    (VERSION_KEY,),
                )
        if changed:
            self.generation = self._version()
        return changed

    # -- reading -------------------------------------------------------------------------

    def references(self, docid: int, limit: int | None = None) -> list[int]:
        """Papers here that ``docid`` cites, by docid. With ``limit`` it stops once it has
        more than ``limit`` (a caller can tell a hub without reading it all)."""
        with self.store.reading() as db:
            out = _resolve(db, _link_keys(db, docid, "ref"), limit)
            out |= _owners(db, _keys_of(db, docid), "citer", limit)
        out.discard(docid)
        return sorted(out)

    def citations(self, docid: int, limit: int | None = None) -> list[int]:
        """Papers here that cite ``docid``, by docid (``limit`` as for ``references``)."""
        with self.store.reading() as db:
            out = _owners(db, _keys_of(db, docid), "ref", limit)
            out |= _resolve(db, _link_keys(db, docid, "citer"), limit)
        out.discard(docid)
        return sorted(out)

    def counts(self, docid: int) -> GraphCounts:
        with self.store.reading() as db:
            row = db.execute(
                "SELECT MAX(c) FROM (SELECT COUNT(DISTINCT n) AS c FROM links "
                "WHERE owner = ? AND kind = 'ref' GROUP BY source)",
                (docid,),
            ).fetchone()
        refs = self.references(docid)
        listed = int(row[0] or 0) if row else 0
        return GraphCounts(max(listed, len(refs)), len(refs), len(self.citations(docid)))

    def shared_links(self, docid: int, kind: str, fanout: int, works: int) -> dict[int, int]:
        """Other papers here with ``kind`` links to works ``docid`` has ``kind`` links to,
        by a shared identifier: ``ref`` gives the reference works both list (bibliographic
        coupling), ``citer`` the citing works both list (co-citation). Counted per source
        of ``docid``'s links, the most any one gives (two sources list the same works).
        Bounded: the first ``works`` works of each source, and an identifier more than
        ``fanout`` papers link to (a hub, which couples a paper to everything) is skipped."""
        shared: dict[tuple[int, str], set[int]] = {}
        with self.store.reading() as db:
            mine = db.execute(
                "SELECT source, n, scheme, value FROM links WHERE owner = ? AND kind = ? "
                "AND scheme != '' AND n < ?",
                (docid, kind, works),
            ).fetchall()
            by_key: dict[Key, list[tuple[str, int]]] = {}
            for source, n, scheme, value in mine:
                by_key.setdefault((str(scheme), str(value)), []).append((str(source), int(n)))
            for (scheme, value), listed in by_key.items():
                owners = db.execute(
                    "SELECT l.owner FROM links l JOIN papers p ON p.docid = l.owner "
                    "WHERE l.scheme = ? AND l.value = ? AND l.kind = ? AND l.owner != ? LIMIT ?",
                    (scheme, value, kind, docid, fanout + 1),
                ).fetchall()
                if len(owners) > fanout:
                    continue
                for (owner,) in owners:
                    for source, n in listed:
                        shared.setdefault((int(owner), source), set()).add(n)
        out: dict[int, int] = {}
        for (owner, _), ns in shared.items():
            out[owner] = max(out.get(owner, 0), len(ns))
        return out

    def keys(self, docid: int) -> list[Key]:
        """The identifiers that name this paper here."""
        with self.store.reading() as db:
            return sorted(_keys_of(db, docid))


def _forget(db: sqlite3.Connection, docid: int) -> None:
    """A deleted paper's edges and identifiers (in the store's delete transaction): the
    next paper given its docid must not inherit them. What other papers say about it stays,
    keyed by its identifiers, so it rejoins the graph if it comes back."""
    gone = db.execute("DELETE FROM links WHERE owner = ?", (docid,)).rowcount
    gone += db.execute("DELETE FROM work_keys WHERE docid = ?", (docid,)).rowcount
    if gone:
        db.execute(
            "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE "
            "SET value = CAST(value AS INTEGER) + 1",
            (VERSION_KEY,),
        )


def _replace_one(db: sqlite3.Connection, docid: int, w: WorkLinks) -> bool:
    changed = False
    keys = {(s, v) for s, v in w.keys if s and v}
    have = {(str(s), str(v)) for s, v in db.execute(
        "SELECT scheme, value FROM work_keys WHERE docid = ?", (docid,))}  # fmt: skip
    new_keys = keys - have
    if new_keys:  # keys accumulate: an id a source once gave stays this paper's
        db.executemany(
            "INSERT OR IGNORE INTO work_keys (scheme, value, docid) VALUES (?, ?, ?)",
            [(s, v, docid) for s, v in sorted(new_keys)],
        )
        changed = True
    for kind, works in (("ref", w.references), ("citer", w.citers)):
        if works is None:
            continue
        rows = sorted({(n, s, v) for n, work in enumerate(works) for s, v in (work or (("", ""),))})
        old = db.execute(
            "SELECT n, scheme, value FROM links WHERE owner = ? AND source = ? AND kind = ? "
            "ORDER BY n, scheme, value",
            (docid, w.source, kind),
        ).fetchall()
        if [(int(n), str(s), str(v)) for n, s, v in old] == rows:
            continue
        db.execute(
            "DELETE FROM links WHERE owner = ? AND source = ? AND kind = ?",
            (docid, w.source, kind),
        )
        db.executemany(
            "INSERT OR IGNORE INTO links (owner, source, kind, n, scheme, value) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(docid, w.source, kind, n, s, v) for n, s, v in rows],
        )
        changed = True
    return changed


def _keys_of(db: sqlite3.Connection, docid: int) -> set[Key]:
    keys = {(str(s), str(v)) for s, v in db.execute(
        "SELECT scheme, value FROM work_keys WHERE docid = ?", (docid,))}  # fmt: skip
    row = db.execute("SELECT arxiv_id, doi FROM papers WHERE docid = ?", (docid,)).fetchone()
    if row is None:  # deleted: it names nothing any more
        return set()
    keys.add(("arxiv", str(row[0])))
    if row[1]:
        keys.add(("doi", str(row[1]).lower()))
    return keys


def _link_keys(db: sqlite3.Connection, owner: int, kind: str) -> set[Key]:
    return {(str(s), str(v)) for s, v in db.execute(
        "SELECT scheme, value FROM links WHERE owner = ? AND kind = ? AND scheme != ''",
        (owner, kind))}  # fmt: skip


def _resolve(db: sqlite3.Connection, keys: set[Key], limit: int | None = None) -> set[int]:
    """The papers of this index these keys name (stopping once more than ``limit``)."""
    out: set[int] = set()
    by_scheme: dict[str, list[str]] = {}
    for s, v in keys:
        by_scheme.setdefault(s, []).append(v)
    for scheme, values in by_scheme.items():
        for marks, chunk in in_batches(sorted(values)):
            if limit is not None and len(out) > limit:
                return out
            if scheme == "arxiv":
                sql = f"SELECT docid FROM papers WHERE arxiv_id IN ({marks})"
                out.update(int(d) for (d,) in db.execute(sql, chunk))
                continue
            if scheme == "doi":  # as the store's ``DOI_INDEX`` is: keys come lower-cased
                sql = f"SELECT docid FROM papers WHERE lower(doi) IN ({marks}) AND doi IS NOT NULL"
                out.update(int(d) for (d,) in db.execute(sql, chunk))
            sql = (
                "SELECT w.docid FROM work_keys w JOIN papers p USING (docid) "
                f"WHERE w.scheme = ? AND w.value IN ({marks})"
            )
            out.update(int(d) for (d,) in db.execute(sql, [scheme, *chunk]))
    return out


def _owners(
    db: sqlite3.Connection, keys: set[Key], kind: str, limit: int | None = None
) -> set[int]:
    """The papers here with a ``kind`` link to any of these keys (stopping once more than
    ``limit``)."""
    out: set[int] = set()
    for s, v in keys:
        if limit is not None and len(out) > limit:
            break
        out.update(
            int(d)
            for (d,) in db.execute(
                "SELECT l.owner FROM links l JOIN papers p ON p.docid = l.owner "
                "WHERE l.scheme = ? AND l.value = ? AND l.kind = ? LIMIT ?",
                (s, v, kind, -1 if limit is None else limit + 1),
            )
        )
    return out
