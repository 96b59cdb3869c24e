"""The store file read without opening a data directory: what ``doctor`` checks (the file
may be damaged or mid-write, so it is opened read-only and errors are the caller's to
report) and the online copy ``backup`` takes. Every query stays in the engine layer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from papersift.core.errors import PapersiftError

STORE_FILE = "papers.sqlite"


class StoreUnreadable(PapersiftError):
    """The store file cannot be opened or read (damaged, locked for too long, not SQLite)."""


@dataclass(frozen=True)
class StoreFacts:
    papers: int
    seq: int
    lexical_seq: int
    docids: tuple[int, int, int]  # sum, min, max


@contextmanager
def read_only(root: Path) -> Iterator[sqlite3.Connection]:
    """The data directory's store, read-only (safe next to a running server)."""
    try:
        with closing(sqlite3.connect(f"file:{root / STORE_FILE}?mode=ro", uri=True)) as db:
            db.execute("PRAGMA busy_timeout = 10000")
            yield db
    except sqlite3.Error as exc:
        raise StoreUnreadable(str(exc)) from exc


def store_facts(root: Path) -> StoreFacts:
    """Counts and sequences of the store; raises :class:`StoreUnreadable` if it cannot be read."""
    with read_only(root) as db:
        papers, total, low, high = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(docid), 0), COALESCE(MIN(docid), 0), "
            "COALESCE(MAX(docid), 0) FROM papers"
        ).fetchone()
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    return StoreFacts(
        int(papers),
        int(meta.get("seq", 0)),
        int(meta.get("lexical_seq", 0)),
        (int(total), int(low), int(high)),
    )


def identity_backlog(root: Path) -> int:
    """Papers changed since researcher identities were last brought up to date."""
    with read_only(root) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'people_seq'").fetchone()
        done = int(row[0]) if row else 0
        return int(db.execute("SELECT COUNT(*) FROM papers WHERE seq > ?", (done,)).fetchone()[0])


def text_hashes(db: sqlite3.Connection) -> dict[int, str]:
    """docid -> hash of the text each paper's vector must be computed from."""
    return {int(d): str(h) for d, h in db.execute("SELECT docid, text_hash FROM papers")}


def embedding_state(
    root: Path, model_id: str, progress_key: str
) -> tuple[dict[int, str], set[int], str | None]:
    """(text hash of every paper, papers marked embedded with their current text, the
    recorded progress line of ``model_id``)."""
    with read_only(root) as db:
        current = text_hashes(db)
        marked = {
            int(d)
            for (d,) in db.execute(
                "SELECT e.docid FROM embedded e JOIN papers p USING (docid) "
                "WHERE e.model = ? AND e.text_hash = p.text_hash",
                (model_id,),
            )
        }
        row = db.execute("SELECT value FROM meta WHERE key = ?", (progress_key,)).fetchone()
    return current, marked, str(row[0]) if row else None


def copy_sqlite(source: Path, target: Path) -> sqlite3.Connection:
    """Copy the SQLite file ``source`` to ``target`` as one snapshot (SQLite's online
    backup, in one step, so the copy is consistent even while a writer commits); returns
    the open copy (the caller closes it)."""
    target.unlink(missing_ok=True)
    dst = sqlite3.connect(target)
    with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src:
        src.execute("PRAGMA busy_timeout = 10000")
        src.backup(dst, pages=-1)
    dst.execute("PRAGMA journal_mode = WAL")  # as the store and the members file open it
    return dst


def backup_store(source: Path, target: Path) -> int:
    """Copy the paper store (``copy_sqlite``); its paper count."""
    with closing(copy_sqlite(source, target)) as dst:
        return int(dst.execute("SELECT COUNT(*) FROM papers").fetchone()[0])
