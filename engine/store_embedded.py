"""Which papers have a current vector of each model: the store's ``embedded`` marks, the
embedding backlog in the orders it is worked through, and the text hashes a vector is
checked against (``engine.store.PaperStore`` inherits these)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Container, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from papersift.engine.sql_batches import in_batches
from papersift.engine.store_files import text_hashes


class EmbeddedMarks:
    """The embedding state of the papers of one store (a mixin of ``PaperStore``, whose
    connection, lock and transactions it uses)."""

    path: Path
    _db: sqlite3.Connection
    _lock: threading.RLock

    if TYPE_CHECKING:

        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def reading(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def mark_embedded(self, model: str, docids: Sequence[int], text_hashes: Sequence[str]) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT OR REPLACE INTO embedded (docid, model, text_hash) VALUES (?, ?, ?)",
                [(d, model, h) for d, h in zip(docids, text_hashes, strict=True)],
            )
            self._db.execute("COMMIT")

    def embedded_count(self, model: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM embedded e JOIN papers p USING (docid) "
                "WHERE e.model = ? AND e.text_hash = p.text_hash",
                (model,),
            ).fetchone()
        return int(row[0])

    def uncovered(self, model: str, by: str) -> int:
        """Papers with a current vector of ``model`` but none of ``by`` (what switching
        queries from ``model`` to ``by`` would lose)."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM embedded e JOIN papers p USING (docid) "
                "WHERE e.model = ? AND e.text_hash = p.text_hash AND NOT EXISTS ("
                "SELECT 1 FROM embedded n WHERE n.docid = p.docid AND n.model = ? "
                "AND n.text_hash = p.text_hash)",
                (model, by),
            ).fetchone()
        return int(row[0])

    def text_hashes(self, docids: Sequence[int]) -> dict[int, str]:
        """docid -> hash of the current embedded text (title + abstract) of these papers."""
        if len(docids) > 20_000:
            # Cheaper to read the whole column (a covering index) than to batch, and on a
            # connection of its own: the store's lock is not held while it runs (0.5 s at
            # 663k papers, when the vector index checks its rows beside the first queries).
            wanted = set(docids)
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            try:
                db.execute("PRAGMA busy_timeout = 10000")
                rows = db.execute("SELECT docid, text_hash FROM papers")
                return {int(d): str(h) for d, h in rows if d in wanted}
            finally:
                db.close()
        with self._lock:
            out: dict[int, str] = {}
            for marks, chunk in in_batches(docids):
                for d, h in self._db.execute(
                    f"SELECT docid, text_hash FROM papers WHERE docid IN ({marks})", chunk
                ):
                    out[int(d)] = str(h)
            return out

    def backlog(self, model: str, limit: int) -> list[tuple[int, str, str]]:
        """Up to ``limit`` (docid, text, text_hash) still to embed with ``model``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT p.docid, p.title, p.abstract, p.text_hash FROM papers p "
                "LEFT JOIN embedded e ON e.docid = p.docid AND e.model = ? "
                "WHERE e.text_hash IS NULL OR e.text_hash != p.text_hash "
                "ORDER BY p.docid LIMIT ?",
                (model, limit),
            ).fetchall()
        return [(int(r[0]), f"{r[1]}. {r[2]}", str(r[3])) for r in rows]

    def backlog_newest(
        self, model: str, limit: int, before: tuple[str, int]
    ) -> list[tuple[int, str, str, str]]:
        """Up to ``limit`` (docid, text, text_hash, published) still to embed with ``model``,
        newest first (first-version date, then docid), strictly below ``before``.

        The caller keeps ``before`` as its cursor, so a pass over the corpus reads each
        row once (a plain ``ORDER BY`` per chunk would re-skip every embedded paper above).
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT p.docid, p.title, p.abstract, p.text_hash, p.published "
                "FROM papers p INDEXED BY papers_published "
                "LEFT JOIN embedded e ON e.docid = p.docid AND e.model = ? "
                "WHERE (p.published, p.docid) < (?, ?) "
                "AND (e.text_hash IS NULL OR e.text_hash != p.text_hash) "
                "ORDER BY p.published DESC, p.docid DESC LIMIT ?",
                (model, before[0], before[1], limit),
            ).fetchall()
        return [(int(r[0]), f"{r[1]}. {r[2]}", str(r[3]), str(r[4])) for r in rows]

    def backlog_changed(
        self, model: str, after_seq: int, limit: int
    ) -> list[tuple[int, str, str, str]]:
        """Like :meth:`backlog_newest` for papers changed after ``after_seq`` (harvested or
        added since the last import), most recent change first: these jump the queue."""
        with self._lock:
            rows = self._db.execute(
                "SELECT p.docid, p.title, p.abstract, p.text_hash, p.published "
                "FROM papers p INDEXED BY papers_seq "
                "LEFT JOIN embedded e ON e.docid = p.docid AND e.model = ? "
                "WHERE p.seq > ? AND (e.text_hash IS NULL OR e.text_hash != p.text_hash) "
                "ORDER BY p.seq DESC LIMIT ?",
                (model, after_seq, limit),
            ).fetchall()
        return [(int(r[0]), f"{r[1]}. {r[2]}", str(r[3]), str(r[4])) for r in rows]

    def all_text_hashes(self) -> dict[int, str]:
        """docid -> text hash of every paper (``doctor --fix``: which vectors are current)."""
        with self.reading() as db:
            return text_hashes(db)

    def forget_embeddings(self, model: str, keep: Container[int]) -> list[int]:
        """Drop the "embedded" marks of ``model`` on papers outside ``keep`` (whose vectors
        were lost), so the next ``index`` embeds them again; the docids dropped."""
        with self.transaction() as db:
            marked = db.execute("SELECT docid FROM embedded WHERE model = ?", (model,))
            rows = [int(d) for (d,) in marked]
            gone = [d for d in rows if d not in keep]
            db.executemany(
                "DELETE FROM embedded WHERE model = ? AND docid = ?", [(model, d) for d in gone]
            )
        return gone
