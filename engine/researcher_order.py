"""The researcher directory's order (most papers first, then name, then the newer id of two
namesakes) as one array of ids per researcher generation: any page of ``/researchers`` with
no name query is a slice of it, and its total the array's length.

``ORDER BY papers DESC, name LIMIT ? OFFSET ?`` sorted the one-paper researchers (533k of the
817k listed at 663k papers) again for every page that reached them, and every page counted
the listed researchers for its total: page 8000 of the API took 5-7 s, page 1 0.6-1 s. The
array is read again when the generation moves (meta ``people_seq`` and ``people_version``,
both written by every identity refresh), walking ``researchers_listed``: 1.6-2.0 s at 663k
on a two-core machine at load 11 (5.4 s sorting without the index), on a connection of its
own, so the store's other readers are not held up meanwhile.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from array import array
from contextlib import closing
from pathlib import Path

from papersift.engine.store import PaperStore

log = logging.getLogger(__name__)

# What the directory lists, and in which order: the ties of (papers, name) go newest id
# first, as SQLite gave them before (it walked ``researchers_papers`` backwards).
LISTED = "papers > 0 AND merged_into IS NULL"
ORDER = "papers DESC, name, rid DESC"
# The order as one index walk: 1.1-1.3 s to read at 663k papers against 2.4-3.2 s sorting
# (load 12 on two cores); made once when a store opens for writing (2.7 s there).
LISTED_INDEX = (
    f"CREATE INDEX IF NOT EXISTS researchers_listed ON researchers({ORDER}) WHERE {LISTED}"
)
ORDER_READ = f"SELECT rid FROM researchers WHERE {LISTED} ORDER BY {ORDER}"
PEOPLE_SEQ = "people_seq"  # the store sequence number the researcher tables reflect
PEOPLE_VERSION = "people_version"  # bumped by every identity refresh that writes
READ_SLICE = 50_000


def generation(db: sqlite3.Connection) -> tuple[str, str]:
    """The researcher tables' (sequence number, version), as the meta table holds them."""
    meta = dict(
        db.execute(
            "SELECT key, value FROM meta WHERE key IN (?, ?)", (PEOPLE_SEQ, PEOPLE_VERSION)
        ).fetchall()
    )
    return str(meta.get(PEOPLE_SEQ, "0")), str(meta.get(PEOPLE_VERSION, "0"))


def read_order(path: Path) -> tuple[tuple[str, str], array[int]]:
    """(generation, listed researcher ids in directory order), from one read transaction."""
    uri = f"file:{path}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, isolation_level=None)) as db:
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("BEGIN")  # one snapshot for the generation and the ids
        seen = generation(db)
        cursor = db.execute(ORDER_READ)
        ids = array("q")
        while rows := cursor.fetchmany(READ_SLICE):
            ids.extend(r for (r,) in rows)
        db.execute("COMMIT")
    return seen, ids


def make_index(store: PaperStore) -> None:
    """Make ``LISTED_INDEX`` unless the store is read-only or has it (logged when slow)."""
    if store.readonly:
        return
    started = time.monotonic()
    with store.reading() as db:
        if db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'researchers_listed'"
        ).fetchone():
            return
    with store.transaction() as db:
        db.execute(LISTED_INDEX)
    if (took := time.monotonic() - started) > 1:
        log.info("%s: the researcher directory's index made in %.1f s (once)", store.path, took)


class DirectoryOrder:
    """The order of one store's researcher directory, read when first needed for a
    generation; safe to share across threads (one read at a time, the others wait)."""

    def __init__(self, store: PaperStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._generation: tuple[str, str] | None = None
        self._ids: array[int] = array("q")

    def current(self) -> array[int]:
        """The listed researcher ids in directory order, read again if the tables moved on."""
        with self.store.reading() as db:
            now = generation(db)
        with self._lock:
            if self._generation != now:
                self._generation, self._ids = read_order(self.store.path)
            return self._ids

    def page(self, limit: int, offset: int) -> tuple[list[int], int]:
        """(ids of the researchers from ``offset``, at most ``limit``; how many are listed)."""
        ids = self.current()
        return list(ids[offset : offset + limit]), len(ids)
