"""Researchers as stored: the identity tables in the paper store and every read of them.

``indexer.identity`` writes these tables; pages, the API and search (the researcher filter
and facet) read them through :class:`People`. The lexical index does not hold researcher
ids, so re-clustering never rewrites Tantivy documents. Ids come from an AUTOINCREMENT
key, so they are never reused.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from papersift.core.names import NameParts, compatible, compound_given, split_name
from papersift.engine.people_names import fill_names, find, query_words
from papersift.engine.people_sitemap import chunk_dates
from papersift.engine.researcher_order import PEOPLE_SEQ as PEOPLE_SEQ
from papersift.engine.researcher_order import DirectoryOrder, make_index
from papersift.engine.results import FacetCount
from papersift.engine.sql_batches import in_batches
from papersift.engine.store import PaperStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS researchers (
    rid INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    key TEXT NOT NULL,
    block TEXT NOT NULL,
    papers INTEGER NOT NULL DEFAULT 0,
    collective INTEGER NOT NULL DEFAULT 0,
    merged_into INTEGER
);
CREATE INDEX IF NOT EXISTS researchers_block ON researchers(block);
CREATE INDEX IF NOT EXISTS researchers_papers ON researchers(papers);
CREATE TABLE IF NOT EXISTS authorships (
    docid INTEGER NOT NULL,
    position INTEGER NOT NULL,
    n_authors INTEGER NOT NULL,
    name TEXT NOT NULL,
    key TEXT NOT NULL,
    block TEXT NOT NULL,
    ids TEXT NOT NULL,
    rid INTEGER,
    PRIMARY KEY (docid, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS authorships_block ON authorships(block);
CREATE INDEX IF NOT EXISTS authorships_rid ON authorships(rid);
CREATE TABLE IF NOT EXISTS researcher_ids (
    source TEXT NOT NULL, value TEXT NOT NULL, rid INTEGER NOT NULL,
    PRIMARY KEY (source, value, rid)
) WITHOUT ROWID;
"""
# Papers with more authors than this give no co-author evidence and no network edges:
# a large collaboration would otherwise link everyone to everyone.
MAX_EVIDENCE_AUTHORS = 50
ID_SOURCES = ("orcid", "openalex", "s2")


def ensure_schema(db: sqlite3.Connection) -> None:
    db.executescript(SCHEMA)


def papers_of_any(store: PaperStore, rids: Sequence[int]) -> list[int]:
    """Sorted docids of the papers any of these researchers wrote (the index holds no
    researcher ids: callers match these as docid terms, 20,000 in about 45 ms at 663k)."""
    found: set[int] = set()
    with store.reading() as db:
        for marks, chunk in in_batches(rids):
            found.update(
                int(d)
                for (d,) in db.execute(
                    f"SELECT docid FROM authorships WHERE rid IN ({marks})", chunk
                )
            )
    return sorted(found)


@dataclass(frozen=True, slots=True)
class Researcher:
    rid: int
    name: str
    key: str
    papers: int
    collective: bool
    ids: tuple[tuple[str, str], ...] = ()
    variants: tuple[str, ...] = ()  # the spellings met on papers


@dataclass(frozen=True, slots=True)
class SameName:
    researcher: Researcher
    reason: str


@dataclass(frozen=True, slots=True)
class Profile:
    researcher: Researcher
    positions: dict[str, int]  # first, middle, last, solo
    years: tuple[tuple[int, int], ...]  # (year, papers), oldest first
    categories: tuple[tuple[str, int], ...]  # (category, papers), most first
    coauthors: tuple[tuple[Researcher, int], ...]  # shared papers, most first
    edges: tuple[tuple[int, int, int], ...]  # co-author pairs (rid, rid, shared papers)
    same_name: tuple[SameName, ...] = field(default=())


class People:
    """Read access to the researcher tables; cheap to create, shares the store's lock."""

    def __init__(self, store: PaperStore) -> None:
        self.store = store
        with store.reading() as db:
            ensure_schema(db)
        fill_names(store, PEOPLE_SEQ)
        make_index(store)
        self.order = DirectoryOrder(store)

    def docids_of(self, rids: Sequence[int]) -> list[int]:
        """Sorted docids of the papers every one of these researchers wrote (the search
        filter: picking two researchers narrows to their joint papers)."""
        found: set[int] | None = None
        with self.store.reading() as db:
            for rid in dict.fromkeys(rids):
                mine = {
                    int(d)
                    for (d,) in db.execute("SELECT docid FROM authorships WHERE rid = ?", (rid,))
                }
                found = mine if found is None else found & mine
                if not found:
                    break
        return sorted(found or ())

    def facet(self, docids: Sequence[int], size: int = 30) -> tuple[FacetCount, ...]:
        """The researchers of these papers, most papers first (ties: the smaller id).
        Counted by SQLite (0.4 ms for 200 papers, against 1.5 ms counting rows here)."""
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT rid, COUNT(*) AS n FROM authorships "
                "WHERE docid IN (SELECT value FROM json_each(?)) AND rid IS NOT NULL "
                "GROUP BY rid ORDER BY n DESC, rid LIMIT ?",
                (json.dumps(list(docids)), size),
            ).fetchall()
        return tuple(FacetCount(str(r), int(n)) for r, n in rows)

    def author_rids(self, arxiv_id: str) -> list[int | None]:
        """Researcher id of each author of a paper, by position (None if not yet assigned)."""
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT a.position, a.rid FROM authorships a JOIN papers p USING (docid) "
                "WHERE p.arxiv_id = ? ORDER BY a.position",
                (arxiv_id,),
            ).fetchall()
        return [None if r is None else int(r) for _, r in rows]

    def get(self, rid: int) -> Researcher | None:
        """A researcher by id; a merged id resolves to the researcher it was merged into."""
        with self.store.reading() as db:
            row = _survivor(db, rid)
            return None if row is None else self._researcher(db, row)

    def survivors(self, rids: Iterable[int]) -> dict[int, int]:
        """The ids among ``rids`` that were merged away, each with the id it leads to now
        (what the search filter reads: the lexical index holds no researcher ids)."""
        out = {}
        with self.store.reading() as db:
            for rid in dict.fromkeys(rids):
                row = _survivor(db, rid)
                if row is not None and int(str(row[0])) != rid:
                    out[rid] = int(str(row[0]))
        return out

    def many(self, rids: Iterable[int]) -> dict[int, Researcher]:
        ids = list(dict.fromkeys(rids))
        out: dict[int, Researcher] = {}
        with self.store.reading() as db:
            for marks, chunk in in_batches(ids):
                for row in db.execute(
                    f"SELECT rid, name, key, papers, collective FROM researchers "
                    f"WHERE rid IN ({marks})",
                    chunk,
                ):
                    out[int(row[0])] = Researcher(
                        int(row[0]), str(row[1]), str(row[2]), int(row[3]), bool(row[4])
                    )
        return out

    def search(
        self, query: str, limit: int = 50, offset: int = 0, *, count: bool = True
    ) -> tuple[list[Researcher], int]:
        """Researchers one of whose spellings has a word starting with each word of
        ``query``, accents, case and punctuation aside (``engine.people_names``), most
        papers first; every researcher for an empty query. ``count=False``: total -1."""
        words = query_words(query)
        if not words and count:  # the directory: a slice of its order, whatever the page
            rids, total = self.order.page(limit, offset)
            found = self.many(rids)
            return [found[r] for r in rids if r in found], total
        with self.store.reading() as db:
            rows, total = find(db, words, limit, offset, count)
        return [
            Researcher(int(str(r[0])), str(r[1]), str(r[2]), int(str(r[3])), bool(r[4]))
            for r in rows
        ], total

    def count(self) -> int:
        with self.store.reading() as db:
            row = db.execute(
                "SELECT COUNT(*) FROM researchers WHERE papers > 0 AND merged_into IS NULL"
            ).fetchone()
        return int(row[0])

    def with_orcid(self, orcid: str) -> list[tuple[int, str, int]]:
        """(rid, name, papers) of the researchers carrying this ORCID, most papers first."""
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT r.rid, r.name, r.papers FROM researcher_ids i JOIN researchers r "
                "ON r.rid = i.rid WHERE i.source = 'orcid' AND i.value = ? "
                "AND r.merged_into IS NULL AND r.papers > 0 ORDER BY r.papers DESC, r.rid",
                (orcid,),
            ).fetchall()
        return [(int(r), str(n), int(p)) for r, n, p in rows]

    def sitemap_chunks(self, size: int) -> list[tuple[int, date | None]]:
        """(chunk, newest paper update) of each rid range ``[k*size+1, (k+1)*size]`` that
        holds a listed researcher (``engine.people_sitemap``)."""
        return chunk_dates(self.store.path, size)

    def sitemap_rows(self, first: int, last: int) -> list[tuple[int, str, date]]:
        """(rid, name, newest paper update) of listed researchers with ids ``first..last``."""
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT r.rid, r.name, MAX(p.updated) FROM researchers r "
                "JOIN authorships a ON a.rid = r.rid JOIN papers p ON p.docid = a.docid "
                "WHERE r.rid BETWEEN ? AND ? AND r.papers > 0 AND r.merged_into IS NULL "
                "GROUP BY r.rid ORDER BY r.rid",
                (first, last),
            ).fetchall()
        return [(int(r), str(n), date.fromisoformat(str(u))) for r, n, u in rows]

    def _researcher(self, db: sqlite3.Connection, row: Sequence[object]) -> Researcher:
        rid = int(str(row[0]))
        ids = db.execute(
            "SELECT source, value FROM researcher_ids WHERE rid = ? ORDER BY source, value", (rid,)
        ).fetchall()
        names = Counter(
            str(n) for (n,) in db.execute("SELECT name FROM authorships WHERE rid = ?", (rid,))
        )
        return Researcher(
            rid,
            str(row[1]),
            str(row[2]),
            int(str(row[3])),
            bool(row[4]),
            tuple((str(s), str(v)) for s, v in ids),
            tuple(n for n, _ in names.most_common()),
        )

    def profile(self, researcher: Researcher, max_coauthors: int = 20) -> Profile:
        """Position statistics, years, categories, co-authors and same-name researchers."""
        rid = researcher.rid
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT a.docid, a.position, a.n_authors, p.published, p.categories "
                "FROM authorships a JOIN papers p USING (docid) WHERE a.rid = ?",
                (rid,),
            ).fetchall()
            co = db.execute(
                "SELECT b.rid, COUNT(DISTINCT b.docid) FROM authorships a JOIN authorships b "
                "ON a.docid = b.docid AND b.rid != a.rid WHERE a.rid = ? AND a.n_authors <= ? "
                "GROUP BY b.rid ORDER BY 2 DESC, b.rid LIMIT ?",
                (rid, MAX_EVIDENCE_AUTHORS, max_coauthors),
            ).fetchall()
            top = [int(r) for r, _ in co]
            marks = ",".join("?" * len(top))
            edges = (
                db.execute(
                    f"SELECT x.rid, y.rid, COUNT(DISTINCT x.docid) FROM authorships a "
                    f"JOIN authorships x ON x.docid = a.docid JOIN authorships y "
                    f"ON y.docid = a.docid AND x.rid < y.rid WHERE a.rid = ? AND a.n_authors <= ? "
                    f"AND x.rid IN ({marks}) AND y.rid IN ({marks}) GROUP BY x.rid, y.rid",
                    (rid, MAX_EVIDENCE_AUTHORS, *top, *top),
                ).fetchall()
                if top
                else []
            )
        positions = Counter[str]()
        years = Counter[int]()
        cats = Counter[str]()
        seen: set[int] = set()
        for docid, pos, n, published, categories in rows:
            if docid in seen:
                continue
            seen.add(docid)
            positions[_position(int(pos), int(n))] += 1
            years[int(str(published)[:4])] += 1
            cats.update(str(categories).split())
        found = self.many(top)
        return Profile(
            researcher,
            {k: positions.get(k, 0) for k in ("first", "middle", "last", "solo")},
            tuple(sorted(years.items())),
            tuple(sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))),
            tuple((found[int(r)], int(n)) for r, n in co if int(r) in found),
            tuple((int(a), int(b), int(n)) for a, b, n in edges),
            self.same_name(researcher),
        )

    def same_name(self, researcher: Researcher) -> tuple[SameName, ...]:
        """Other researchers whose names could be this one's, and why they are kept apart."""
        me = _name_parts(researcher)
        with self.store.reading() as db:
            rows = db.execute(
                "SELECT rid, name, key, papers, collective FROM researchers WHERE block = "
                "(SELECT block FROM researchers WHERE rid = ?) AND rid != ? AND papers > 0 "
                "AND merged_into IS NULL ORDER BY papers DESC LIMIT 50",
                (researcher.rid, researcher.rid),
            ).fetchall()
            mine = _ids(db, researcher.rid)
            my_docs = _docids(db, researcher.rid)
            out = []
            for r in rows:
                other = Researcher(int(r[0]), str(r[1]), str(r[2]), int(r[3]), bool(r[4]))
                theirs = _ids(db, other.rid)
                clash = sorted(s for s in mine.keys() & theirs.keys() if mine[s] != theirs[s])
                if clash:
                    reason = f"different {_SOURCE_NAMES.get(clash[0], clash[0])} ids"
                elif not compatible(me, _name_parts(other)):
                    reason = "different given names"
                elif my_docs & _docids(db, other.rid):
                    reason = "both are authors of the same paper"
                elif me.key == other.key and me.full:
                    reason = "a common name; no two co-authors or an id link the papers"
                elif me.key == other.key:
                    reason = "same initials only; no shared co-author or id links the papers"
                else:
                    reason = "no shared co-author or id links the two spellings"
                out.append(SameName(other, reason))
        return tuple(out)


def _name_parts(r: Researcher) -> NameParts:
    """The researcher's name for matching; a hyphenated first name in its label ("Wei-Ning
    Zhang") is one name, as ``indexer.identity`` reads it."""
    p = split_name(r.key)
    return replace(p, compound=True) if compound_given(r.name) and not p.collective else p


_SOURCE_NAMES = {"orcid": "ORCID", "openalex": "OpenAlex", "s2": "Semantic Scholar"}


def _ids(db: sqlite3.Connection, rid: int) -> dict[str, str]:
    return {
        str(s): str(v)
        for s, v in db.execute("SELECT source, value FROM researcher_ids WHERE rid = ?", (rid,))
    }


def _docids(db: sqlite3.Connection, rid: int) -> set[int]:
    return {int(d) for (d,) in db.execute("SELECT docid FROM authorships WHERE rid = ?", (rid,))}


def _position(pos: int, n: int) -> str:
    if n == 1:
        return "solo"
    if pos == 0:
        return "first"
    return "last" if pos == n - 1 else "middle"


def encode_ids(ids: Iterable[tuple[str, str]]) -> str:
    return json.dumps(sorted({(s, v) for s, v in ids if s in ID_SOURCES}))


def _survivor(db: sqlite3.Connection, rid: int) -> Sequence[object] | None:
    """The row of ``rid``, or of the researcher a merge led it to; None for an unknown id."""
    for _ in range(20):  # merge chains are short; the bound guards against a cycle
        row: Sequence[object] | None = db.execute(
            "SELECT rid, name, key, papers, collective, merged_into FROM researchers WHERE rid = ?",
            (rid,),
        ).fetchone()
        if row is None or row[5] is None:
            return row
        rid = int(str(row[5]))
    return None
