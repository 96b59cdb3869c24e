"""A paper as a row of the store's ``papers`` table and back: the schema, the column list
and the encodings of the fields SQLite has no type for (authors, extra links)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Sequence
from datetime import date

import orjson

from papersift.core.paper import Author, Paper

SCHEMA = """
CREATE TABLE IF NOT EXISTS papers (
    docid INTEGER PRIMARY KEY,
    arxiv_id TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL,
    title TEXT NOT NULL,
    abstract TEXT NOT NULL,
    authors TEXT NOT NULL,
    categories TEXT NOT NULL,
    published TEXT NOT NULL,
    updated TEXT NOT NULL,
    doi TEXT, journal_ref TEXT, comments TEXT, license TEXT,
    citation_count INTEGER,
    extra TEXT NOT NULL DEFAULT '[]',
    record_hash TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS papers_seq ON papers(seq);
-- Covering index for reading every text hash (opening the vector index): 0.45 s instead of
-- 1.1 s at 663k papers, as the scan skips the wide rows.
CREATE INDEX IF NOT EXISTS papers_text_hash ON papers(docid, text_hash);
-- The embedding backlog goes newest first: walked from the top by (published, docid).
CREATE INDEX IF NOT EXISTS papers_published ON papers(published);
CREATE TABLE IF NOT EXISTS tombstones (docid INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS embedded (
    docid INTEGER NOT NULL, model TEXT NOT NULL, text_hash TEXT NOT NULL,
    PRIMARY KEY (docid, model)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# A query that is a DOI opens its paper (engine.direct) and a reference by DOI resolves to
# it (engine.graph). DOIs ignore case; SQLite seeks an expression index only for a WHERE on
# the same expression (``lower(doi) = lower(?) AND doi IS NOT NULL``): ``doi = ? COLLATE
# NOCASE`` read the whole index at 663k papers (0.4-1.2 s), as this one (the graph's, in
# older stores) could not serve it.
DOI_INDEX = "CREATE INDEX papers_doi ON papers(lower(doi)) WHERE doi IS NOT NULL"
DOI_LOOKUP = "SELECT docid FROM papers WHERE lower(doi) = lower(?) AND doi IS NOT NULL LIMIT 1"
# The sitemap's lastmods: the newest update of each docid range (papers), of each paper
# (researchers). Covering (updated, docid), the reads skip the wide rows: a pass over the
# table took 3-4 s of a first /sitemap.xml's 10 s at 663k papers, twice.
UPDATED_INDEX = "CREATE INDEX papers_updated ON papers(updated)"
# Indexes stores made before them lack or made otherwise: made when a store opens for
# writing (``make_indexes``), so that takes its time once and says so.
INDEXES = {"papers_doi": DOI_INDEX, "papers_updated": UPDATED_INDEX}

COLUMNS = (
    "docid, arxiv_id, version, title, abstract, authors, categories, published, updated, "
    "doi, journal_ref, comments, license, citation_count, extra"
)


def content_hash(text: str) -> str:
    """A short stable hash: of a row's values (has the record changed?) or of the text a
    paper's vector was made from (is its vector current?)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def encode_authors(authors: Sequence[Author]) -> str:
    return json.dumps(
        [[a.name, a.key, [list(i) for i in a.ids]] for a in authors], ensure_ascii=False
    )


def decode_authors(raw: str) -> tuple[Author, ...]:
    # Most authors have no ids: their empty tuple is not built through a generator. orjson
    # reads the list in 1.1 us a paper against json's 3.0 (every hit of every page).
    return tuple(
        Author(n, k, tuple((s, v) for s, v in ids) if ids else ())
        for n, k, ids in orjson.loads(raw)
    )


def row_values(p: Paper) -> tuple[object, ...]:
    """``p`` as the values of ``COLUMNS`` after ``docid``."""
    return (
        p.arxiv_id,
        p.version,
        p.title,
        p.abstract,
        encode_authors(p.authors),
        " ".join(p.categories),
        p.published.isoformat(),
        p.updated.isoformat(),
        p.doi,
        p.journal_ref,
        p.comments,
        p.license,
        p.citation_count,
        json.dumps([list(kv) for kv in p.extra]),
    )


def paper_of_row(row: Sequence[object]) -> Paper:
    """The paper of a row of ``COLUMNS``."""
    (
        _,
        arxiv_id,
        version,
        title,
        abstract,
        authors,
        cats,
        pub,
        upd,
        doi,
        jref,
        comments,
        lic,
        cited,
        extra,
    ) = row
    return Paper(
        arxiv_id=str(arxiv_id),
        version=int(str(version)),
        title=str(title),
        abstract=str(abstract),
        authors=decode_authors(str(authors)),
        categories=tuple(str(cats).split()),
        published=date.fromisoformat(str(pub)),
        updated=date.fromisoformat(str(upd)),
        doi=None if doi is None else str(doi),
        journal_ref=None if jref is None else str(jref),
        comments=None if comments is None else str(comments),
        license=None if lic is None else str(lic),
        citation_count=None if cited is None else int(str(cited)),
        extra=() if extra == "[]" else tuple((str(k), str(v)) for k, v in orjson.loads(str(extra))),
    )


def make_indexes(db: sqlite3.Connection) -> float | None:
    """Make each of ``INDEXES`` that is missing or defined otherwise (stores made by
    9bad418 until session 35 have ``papers_doi`` on ``doi COLLATE NOCASE``, which neither
    DOI query can seek), in one transaction; the seconds it took, or None when all were in
    place. At 663k papers each is one pass over the papers table: 2-3 s, once."""
    if all(_index_sql(db, name) == sql for name, sql in INDEXES.items()):
        return None
    started = time.monotonic()
    db.execute("BEGIN IMMEDIATE")
    try:
        for name, sql in INDEXES.items():
            if _index_sql(db, name) != sql:  # another process may have made it meanwhile
                db.execute(f"DROP INDEX IF EXISTS {name}")
                db.execute(sql)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return time.monotonic() - started


def _index_sql(db: sqlite3.Connection, name: str) -> str | None:
    row = db.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)
    ).fetchone()
    return None if row is None else " ".join(str(row[0]).split())
