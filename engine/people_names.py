"""The researcher directory's name index: every word of every spelling a researcher's papers
record, folded as identity keys are (accents, case, punctuation), so ``/researchers?q=``
finds "Katy Boerner" under "Börner", "Borner" and "borner" as well as "Boerner".

A query word matches a name word it starts: one range seek on the primary key, where the
``LIKE '%word%'`` over the researchers' display names before it read every researcher
(on a million synthetic names: about a second per search, against under a millisecond for
a surname and ~0.35 s for a single letter, which matches a tenth of them). The
identity refresh (``indexer.identity_refresh``) rewrites the words of the researchers it
recomputes in its own transaction; a store made before this table, or refreshed since by a
papersift without it, gets it filled from the authorship rows when next opened for writing
(``fill_names``).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterable, Mapping

from papersift.core.authors import decode_tex, normalise_name
from papersift.engine.researcher_order import LISTED, ORDER
from papersift.engine.sql_batches import in_batches
from papersift.engine.store import PaperStore

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS researcher_names (
    word TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (word, rid)
) WITHOUT ROWID;
"""
# Rewriting a researcher's words, and checking a query's other words, go by researcher.
RID_INDEX = "CREATE INDEX IF NOT EXISTS researcher_names_rid ON researcher_names(rid)"
# Every word of every assigned authorship's key, split and sorted by SQLite: inserted in
# key order, then indexed, the fill takes about half the time of rows split in Python and
# inserted as read (31 s against 63 s for 2M authorships on a loaded machine).
_FILL = """
WITH RECURSIVE split(rid, word, rest) AS (
    SELECT rid, '', key || ' ' FROM authorships WHERE rid IS NOT NULL
    UNION ALL
    SELECT rid, substr(rest, 1, instr(rest, ' ') - 1), substr(rest, instr(rest, ' ') + 1)
    FROM split WHERE rest <> ''
)
INSERT OR IGNORE INTO researcher_names (word, rid)
SELECT word, rid FROM split WHERE word <> '' ORDER BY word, rid
"""
# Meta key: the researcher tables' sequence number (``engine.people.PEOPLE_SEQ``) the words
# reflect. The identity refresh moves both in one transaction; a store whose two differ (made
# before the table, or refreshed by a papersift without it since) is filled again.
NAMES_SEQ = "researcher_names_seq"
_TOP = "\U0010ffff"  # sorts after every character: ``word < prefix + _TOP`` ends the range
_COLUMNS = "rid, name, key, papers, collective"


def words_of(keys: Iterable[str]) -> set[str]:
    """The distinct words of these normalised name keys (``normalise_name``)."""
    return {w for k in keys for w in k.split()}


def query_words(query: str) -> list[str]:
    """The words of a typed name, folded as the index is (TeX accents too), longest first:
    the longest is usually the rarest, so it drives the search."""
    if "\\" in query:
        query = decode_tex(query)
    return sorted(set(normalise_name(query).split()), key=lambda w: (-len(w), w))


def write_names(
    db: sqlite3.Connection, names: Mapping[int, Iterable[str]], drop: Iterable[int]
) -> None:
    """Replace the words of researchers ``drop`` (those a refresh recomputed) with ``names``
    (rid -> the keys of all their authorships)."""
    for marks, chunk in in_batches(sorted(set(drop))):
        db.execute(f"DELETE FROM researcher_names WHERE rid IN ({marks})", chunk)
    db.executemany(
        "INSERT OR IGNORE INTO researcher_names (word, rid) VALUES (?, ?)",
        sorted((w, rid) for rid, keys in names.items() for w in words_of(keys)),
    )


def fill_names(store: PaperStore, seq_key: str) -> None:
    """Make the table and, unless it reflects the researcher tables (meta ``seq_key``), fill
    it from the authorships (one transaction; 31 s for 2M authorships on a busy two-core
    machine). Idempotent; a read-only store is left as it is."""
    if store.readonly or _current(store, seq_key):
        return
    with store.reading() as db:
        db.executescript(SCHEMA)
    with store.transaction() as db:  # another process may have filled it meanwhile: re-read
        if _current(store, seq_key):
            return
        started = time.monotonic()
        db.execute("DROP INDEX IF EXISTS researcher_names_rid")
        db.execute("DELETE FROM researcher_names")
        db.execute(_FILL)
        db.execute(RID_INDEX)
        seq = store.get_meta(seq_key) or "0"
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (NAMES_SEQ, seq))
    if (took := time.monotonic() - started) > 1:
        log.info("%s: the researcher name index filled from the authorships in %.1f s "
                 "(once)", store.path, took)  # fmt: skip


def _current(store: PaperStore, seq_key: str) -> bool:
    return store.get_meta(NAMES_SEQ) == (store.get_meta(seq_key) or "0")


def find(
    db: sqlite3.Connection, words: list[str], limit: int, offset: int, count: bool = True
) -> tuple[list[tuple[object, ...]], int]:
    """(rows of ``_COLUMNS``, total) of the listed researchers with a word starting with
    each of ``words`` (from ``query_words``), most papers first; every one for no words.
    ``count=False``: the total is -1, and the rows cost no pass over the table (counting
    every researcher took 0.46 s at 663k papers, the first row 0.6 ms)."""
    listed = LISTED
    args: list[object] = []
    if words:
        # The first (longest) word's range drives; each other word is a seek on the
        # researcher's own few words.
        first, *rest = words
        hits = "SELECT DISTINCT n.rid FROM researcher_names n WHERE n.word >= ? AND n.word < ?"
        hits += "".join(
            " AND EXISTS (SELECT 1 FROM researcher_names o WHERE o.rid = n.rid "
            "AND o.word >= ? AND o.word < ?)"
            for _ in rest
        )
        args = [x for w in (first, *rest) for x in (w, w + _TOP)]
        listed += f" AND rid IN ({hits})"
    total = -1
    if count:
        total = int(
            db.execute(f"SELECT COUNT(*) FROM researchers WHERE {listed}", args).fetchone()[0]
        )
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM researchers WHERE {listed} ORDER BY {ORDER} LIMIT ? OFFSET ?",
        [*args, limit, offset],
    ).fetchall()
    return [tuple(r) for r in rows], total
