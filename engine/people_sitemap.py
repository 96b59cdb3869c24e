"""The researchers' sitemap chunks: each rid range that lists a researcher, dated by the
newest update among its researchers' papers.

A join of authorships to papers reads a whole paper row per authorship (seconds per 100k
papers). Here SQLite reads every paper's update date from the ``papers_updated`` index
and every assigned authorship from ``authorships_rid``, and numpy takes the newest per
range: at 663k papers (2.2M authorships) the Python loop over both, and the table scan
for the dates, took 6-7 s of a first ``/sitemap.xml``. One snapshot, on a connection of
its own, so the store's lock stays free for searches meanwhile.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import date
from pathlib import Path

import numpy as np
import numpy.typing as npt

from papersift.engine.researcher_order import LISTED

READ_SLICE = 100_000  # rows converted at a time
# julianday() counts from noon, 4714 BC; ``date.toordinal`` from 1 January of year 1.
_ORDINAL = "CAST(julianday(updated) - 1721424.5 AS INTEGER)"


def chunk_dates(path: Path, size: int) -> list[tuple[int, date | None]]:
    """(chunk, newest paper update) of each rid range ``[k*size+1, (k+1)*size]`` that holds
    a listed researcher (one with papers, not merged away), in chunk order."""
    uri = f"file:{path}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, isolation_level=None)) as db:
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("BEGIN")  # one snapshot for the three reads
        chunks = sorted(
            int(k)
            for (k,) in db.execute(
                f"SELECT DISTINCT (rid - 1) / ? FROM researchers WHERE {LISTED}", (size,)
            )
        )
        (top,) = db.execute("SELECT COALESCE(MAX(docid), 0) FROM papers").fetchone()
        days = np.zeros(int(top) + 1, np.int64)  # docid -> ordinal of its update (0: none)
        for docids, ordinals in _columns(db, f"SELECT docid, {_ORDINAL} FROM papers"):
            days[docids] = ordinals
        newest = np.zeros(chunks[-1] + 1 if chunks else 0, np.int64)
        query = "SELECT (rid - 1) / ?, docid FROM authorships WHERE rid IS NOT NULL"
        for ks, docids in _columns(db, query, (size,)):
            keep = ks < len(newest)
            np.maximum.at(newest, ks[keep], days[docids[keep]])
        db.execute("COMMIT")
    return [(k, date.fromordinal(int(newest[k])) if newest[k] else None) for k in chunks]


def _columns(
    db: sqlite3.Connection, sql: str, args: tuple[object, ...] = ()
) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """The two integer columns of ``sql``'s rows as arrays, a slice of rows at a time."""
    cursor = db.execute(sql, args)
    while rows := cursor.fetchmany(READ_SLICE):
        pairs = np.asarray(rows, np.int64)
        yield pairs[:, 0], pairs[:, 1]
