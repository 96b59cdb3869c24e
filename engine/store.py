"""The source-of-truth paper store (SQLite): papers, change sequence, embedding state (the
latter in ``engine.store_embedded``).

Every change to a paper bumps a global sequence number; the lexical index records the
sequence it has absorbed, so after a crash the missing tail is replayed (idempotently).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from papersift.core.errors import DataDirError, not_writable, unwritable
from papersift.core.paper import Paper
from papersift.core.records import RecordError, checked
from papersift.engine.enrichment import carry_enrichment
from papersift.engine.sql_batches import in_batches
from papersift.engine.store_embedded import EmbeddedMarks
from papersift.engine.store_rows import (
    COLUMNS,
    DOI_LOOKUP,
    SCHEMA,
    content_hash,
    make_indexes,
    paper_of_row,
    row_values,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UpsertCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0  # records out of bounds (see papersift.core.records), logged and not stored

    def __add__(self, other: UpsertCounts) -> UpsertCounts:
        return UpsertCounts(
            self.added + other.added, self.updated + other.updated,
            self.unchanged + other.unchanged, self.rejected + other.rejected,
        )  # fmt: skip


# What SQLite raises for a file that is no database or a damaged one, for callers above the
# engine that do not touch SQLite themselves (the CLI's one-line errors).
DatabaseError = sqlite3.DatabaseError


class PaperStore(EmbeddedMarks):
    """SQLite-backed papers keyed by a stable internal ``docid``; safe to share across threads.
    Which have current vectors, and the embedding backlog: ``EmbeddedMarks``."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly  # derived tables are then neither made nor migrated
        uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
        self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        self._lock = threading.RLock()
        # Run inside delete's transaction for each removed docid: what other tables keep of
        # the paper goes with it (a docid can be given again, to the next paper added).
        self.on_delete: list[Callable[[sqlite3.Connection, int], None]] = []
        try:
            self._db.execute("PRAGMA busy_timeout = 10000")
            if not readonly:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")
                self._db.executescript(SCHEMA)
                if (took := make_indexes(self._db)) is not None and took > 1:
                    log.info("%s: indexes made in %.1f s (once)", path, took)
        except sqlite3.DatabaseError as exc:  # not a database, a damaged one, or no access
            self._db.close()
            # SQLite writes beside the store even to read it (its WAL's shared memory).
            reason = unwritable(path.parent)
            if reason is not None:
                raise not_writable(path.parent, reason) from None
            raise DataDirError(
                f"{path} cannot be read ({exc}): restore the data directory from a backup "
                "(`papersift doctor` checks every part of it)"
            ) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writing -------------------------------------------------------------------------

    def upsert(self, papers: Iterable[Paper]) -> tuple[UpsertCounts, list[tuple[int, Paper]]]:
        """Insert new papers, replace older versions or changed records; one transaction.

        Returns the counts and the (docid, paper) pairs that changed. A record whose content
        is identical to the stored one, or whose version is older, changes nothing. A
        replacing record keeps the stored enrichment it lacks (``carry_enrichment``), so
        re-importing a snapshot after an enrichment run changes nothing either.
        """
        batch: dict[str, Paper] = {}
        superseded = rejected = 0
        for p in papers:  # within a batch, the newest version of an id wins
            try:  # the parsers check where a record enters; this guards every other caller
                p = checked(p)
            except RecordError as exc:
                log.warning("not stored: %s", exc)
                rejected += 1
                continue
            old = batch.get(p.arxiv_id)
            if old is not None:
                superseded += 1
            if old is None or p.version >= old.version:
                batch[p.arxiv_id] = p
        if not batch:
            return UpsertCounts(rejected=rejected), []
        added = updated = 0
        unchanged = superseded
        changed: list[tuple[int, Paper]] = []
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                existing: dict[str, tuple[int, int, str]] = {}
                ids = list(batch)
                for marks, chunk in in_batches(ids):
                    for row in db.execute(
                        f"SELECT arxiv_id, docid, version, record_hash FROM papers "
                        f"WHERE arxiv_id IN ({marks})",
                        chunk,
                    ):
                        existing[row[0]] = (row[1], row[2], row[3])
                seq = self._next_seq()
                for arxiv_id, p in batch.items():
                    values = row_values(p)
                    record_hash = content_hash(json.dumps(values, default=str))
                    prev = existing.get(arxiv_id)
                    if prev is not None and p.version >= prev[1] and record_hash != prev[2]:
                        # Keep the stored record's enrichment where this one has none.
                        row = db.execute(
                            f"SELECT {COLUMNS} FROM papers WHERE docid = ?", (prev[0],)
                        ).fetchone()
                        p = carry_enrichment(paper_of_row(row), p)
                        values = row_values(p)
                        record_hash = content_hash(json.dumps(values, default=str))
                    if prev is not None and (p.version < prev[1] or record_hash == prev[2]):
                        unchanged += 1
                        continue
                    seq += 1
                    text_hash = content_hash(p.embed_text)
                    if prev is None:
                        cur = db.execute(
                            "INSERT INTO papers (arxiv_id, version, title, abstract, authors, "
                            "categories, published, updated, doi, journal_ref, comments, license, "
                            "citation_count, extra, record_hash, text_hash, seq) "
                            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                            (*values, record_hash, text_hash, seq),
                        )
                        assert cur.lastrowid is not None
                        changed.append((cur.lastrowid, p))
                        added += 1
                    else:
                        db.execute(
                            "UPDATE papers SET arxiv_id=?, version=?, title=?, abstract=?, "
                            "authors=?, categories=?, published=?, updated=?, doi=?, "
                            "journal_ref=?, comments=?, license=?, citation_count=?, extra=?, "
                            "record_hash=?, text_hash=?, seq=? WHERE docid=?",
                            (*values, record_hash, text_hash, seq, prev[0]),
                        )
                        changed.append((prev[0], p))
                        updated += 1
                self._set_meta("seq", str(seq))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return UpsertCounts(added, updated, unchanged, rejected), changed

    def delete(self, arxiv_ids: Iterable[str]) -> list[int]:
        """Remove papers; their docids get a tombstone so the indexes drop them too."""
        removed: list[int] = []
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                seq = self._next_seq()
                for arxiv_id in arxiv_ids:
                    row = self._db.execute(
                        "SELECT docid FROM papers WHERE arxiv_id = ?", (arxiv_id,)
                    ).fetchone()
                    if row is None:
                        continue
                    seq += 1
                    self._db.execute("DELETE FROM papers WHERE docid = ?", (row[0],))
                    self._db.execute("DELETE FROM embedded WHERE docid = ?", (row[0],))
                    for forget in self.on_delete:
                        forget(self._db, int(row[0]))
                    self._db.execute(
                        "INSERT OR REPLACE INTO tombstones (docid, seq) VALUES (?, ?)",
                        (row[0], seq),
                    )
                    removed.append(row[0])
                self._set_meta("seq", str(seq))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return removed

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection inside one write transaction, for derived tables (researchers)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection for reads of derived tables, under the store's lock."""
        with self._lock:
            yield self._db

    # -- reading -------------------------------------------------------------------------

    def _next_seq(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        return int(row[0]) if row else 0

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._set_meta(key, value)

    @property
    def seq(self) -> int:
        with self._lock:
            return self._next_seq()

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM papers").fetchone()[0])

    def docid_of(self, arxiv_id: str) -> int | None:
        with self._lock:
            row = self._db.execute(
                "SELECT docid FROM papers WHERE arxiv_id = ?", (arxiv_id,)
            ).fetchone()
        return None if row is None else int(row[0])

    def docid_of_doi(self, doi: str) -> int | None:
        """The paper with this DOI (any case), if one has it."""
        with self._lock:
            row = self._db.execute(DOI_LOOKUP, (doi,)).fetchone()
        return None if row is None else int(row[0])

    def get(self, docids: Sequence[int]) -> dict[int, Paper]:
        """Papers by docid (missing ones are left out)."""
        out: dict[int, Paper] = {}
        with self._lock:
            for marks, chunk in in_batches(docids):
                for row in self._db.execute(
                    f"SELECT {COLUMNS} FROM papers WHERE docid IN ({marks})", chunk
                ):
                    out[row[0]] = paper_of_row(row)
        return out

    def titles(self, docids: Sequence[int]) -> dict[int, str]:
        """Titles by docid (missing ones are left out): a quarter of ``get``'s time for a
        few papers at 663k (0.17 against 0.75 ms for 11), as the rest of each row is left."""
        out: dict[int, str] = {}
        with self._lock:
            for marks, chunk in in_batches(docids):
                sql = f"SELECT docid, title FROM papers WHERE docid IN ({marks})"
                out.update(self._db.execute(sql, chunk).fetchall())
        return out

    def changed_since(self, seq: int, limit: int = 5000) -> Iterator[list[tuple[int, Paper, int]]]:
        """Batches of (docid, paper, seq) changed after ``seq``, in sequence order."""
        while True:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT {COLUMNS}, seq FROM papers WHERE seq > ? ORDER BY seq LIMIT ?",
                    (seq, limit),
                ).fetchall()
            if not rows:
                return
            yield [(r[0], paper_of_row(r[:-1]), r[-1]) for r in rows]
            seq = rows[-1][-1]

    def changes_after(self, seq: int, limit: int | None = None) -> list[tuple[int, int]]:
        """(docid, seq) of the papers changed after ``seq``, oldest change first."""
        with self._lock:
            return [
                (int(d), int(s))
                for d, s in self._db.execute(
                    "SELECT docid, seq FROM papers WHERE seq > ? ORDER BY seq LIMIT ?",
                    (seq, -1 if limit is None else limit),
                )
            ]

    def changes_since(self, seq: int) -> int:
        """How many papers changed after ``seq`` (a backlog's size)."""
        with self._lock:
            return int(
                self._db.execute("SELECT COUNT(*) FROM papers WHERE seq > ?", (seq,)).fetchone()[0]
            )

    def tombstones_since(self, seq: int) -> list[tuple[int, int]]:
        with self._lock:
            return [
                (int(d), int(s))
                for d, s in self._db.execute(
                    "SELECT docid, seq FROM tombstones WHERE seq > ? ORDER BY seq", (seq,)
                )
            ]

    def dois(self) -> list[tuple[int, str]]:
        """(docid, DOI as stored) of every paper that has one."""
        with self.reading() as db:
            rows = db.execute("SELECT docid, doi FROM papers WHERE doi IS NOT NULL").fetchall()
        return [(int(d), str(doi)) for d, doi in rows]

    def ids_and_dois(self, arxiv_ids: Sequence[str] | None = None) -> list[tuple[str, str | None]]:
        """(arXiv id, DOI or None) of these papers (all when None), in docid order."""
        with self.reading() as db:
            if arxiv_ids is None:
                rows = db.execute("SELECT arxiv_id, doi FROM papers ORDER BY docid").fetchall()
            else:
                rows = []
                for marks, chunk in in_batches(arxiv_ids):
                    rows += db.execute(
                        f"SELECT docid, arxiv_id, doi FROM papers WHERE arxiv_id IN ({marks})",
                        chunk,
                    ).fetchall()
                rows = [(a, d) for _, a, d in sorted(rows)]
        return [(str(a), None if d is None else str(d)) for a, d in rows]

    def sitemap_chunks(self, size: int) -> list[tuple[int, date]]:
        """(chunk, newest update) of each non-empty docid range ``[k*size+1, (k+1)*size]``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT (docid - 1) / ?, MAX(updated) FROM papers GROUP BY 1 ORDER BY 1", (size,)
            ).fetchall()
        return [(int(k), date.fromisoformat(str(u))) for k, u in rows]

    def iter_sitemap_rows(
        self, first: int, last: int, batch: int = 5000
    ) -> Iterator[tuple[str, str, date]]:
        """(arxiv_id, title, updated) of docids ``first..last`` in docid order, streamed in
        batches so the lock is never held between them."""
        after = first - 1
        while after < last:
            with self._lock:
                rows = self._db.execute(
                    "SELECT docid, arxiv_id, title, updated FROM papers "
                    "WHERE docid > ? AND docid <= ? ORDER BY docid LIMIT ?",
                    (after, last, batch),
                ).fetchall()
            if not rows:
                return
            for _, arxiv_id, title, updated in rows:
                yield str(arxiv_id), str(title), date.fromisoformat(str(updated))
            after = int(rows[-1][0])

    def newest_updated(self) -> date | None:
        """The latest ``updated`` date of any paper (where an incremental harvest starts)."""
        with self._lock:
            (hi,) = self._db.execute("SELECT MAX(updated) FROM papers").fetchone()
        return date.fromisoformat(hi) if hi else None

    def versions(self, arxiv_ids: Sequence[str]) -> dict[str, int]:
        """Stored version of each of these ids that is in the store."""
        out: dict[str, int] = {}
        with self._lock:
            for marks, chunk in in_batches(arxiv_ids):
                for a, v in self._db.execute(
                    f"SELECT arxiv_id, version FROM papers WHERE arxiv_id IN ({marks})", chunk
                ):
                    out[str(a)] = int(v)
        return out
