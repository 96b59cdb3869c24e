"""Researcher ids of every paper in numpy arrays, for the search page's researcher facet.

Every search counts the researchers of its first 200 results. SQLite did it from the
``authorships`` table in about 1.0-1.5 ms per search at 663k papers (a tenth of a keyword
search's CPU); here it is a slice and a count in well under a millisecond.

The arrays are one scan of ``authorships`` (2.2M rows at 663k papers, about 2 s) on a
background thread with a connection of its own, read in the same transaction as the
researcher tables' sequence number (``engine.people.PEOPLE_SEQ``). Researcher ids only
change when identities are refreshed, which moves that number on; a table is used for the
generation it was read at or a later one, and until a fresh one is read search asks SQLite.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import numpy as np
import numpy.typing as npt

from papersift.engine.people import PEOPLE_SEQ
from papersift.engine.results import FacetCount

log = logging.getLogger(__name__)

READ_SLICE = 50_000  # authorship rows converted at a time


def read_authorships(path: Path) -> tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(the researcher tables' sequence number, docids, researcher ids) of every assigned
    authorship, from one read transaction."""
    uri = f"file:{path}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, isolation_level=None)) as db:
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("BEGIN")  # one snapshot for the sequence number and the rows
        row = db.execute("SELECT value FROM meta WHERE key = ?", (PEOPLE_SEQ,)).fetchone()
        generation = int(row[0]) if row and row[0] else 0
        cursor = db.execute("SELECT docid, rid FROM authorships WHERE rid IS NOT NULL")
        # In slices: 2.2M rows as Python tuples at once would take ~250 MB for a moment.
        chunks = [np.zeros((0, 2), np.int64)]
        while rows := cursor.fetchmany(READ_SLICE):
            chunks.append(np.asarray(rows, np.int64))
        db.execute("COMMIT")
    pairs = np.concatenate(chunks)
    return generation, pairs[:, 0], pairs[:, 1]


class ResearcherTable:
    """Researcher ids by docid (compressed rows); ``current`` says when it may be used."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._generation: int | None = None  # PEOPLE_SEQ the arrays reflect; None: not read
        self._starts = np.zeros(1, np.int64)  # docid d's ids are _rids[_starts[d]:_starts[d+1]]
        self._rids = np.zeros(0, np.int32)
        self._building: threading.Thread | None = None
        self._tried = -1  # the generation the last read was started for

    def build(self) -> None:
        """Read every assigned authorship (blocking) and swap the new arrays in."""
        generation, docids, rids = read_authorships(self.path)
        order = np.argsort(docids, kind="stable")
        docids, rids = docids[order], rids[order]
        top = int(docids[-1]) + 1 if len(docids) else 0
        starts = np.zeros(top + 1, np.int64)
        np.cumsum(np.bincount(docids, minlength=top), out=starts[1:])
        with self._lock:
            self._starts, self._rids = starts, rids.astype(np.int32)
            self._generation = generation

    def current(self, generation: str) -> ResearcherTable | None:
        """This table if it reflects ``generation`` (``DataDir.people_generation``) or a
        later one, else None."""
        with self._lock:
            fresh = self._generation is not None and self._generation >= int(generation or 0)
        return self if fresh else None

    def follow(self, generation: str) -> None:
        """Start reading the table in the background unless it reflects ``generation`` or
        is being read. Called after an answer is built: the read holds the GIL for about
        a second at 663k papers, which would otherwise hold up that answer."""
        if self.current(generation) is not None:
            return
        wanted = int(generation or 0)
        with self._lock:
            # A read for this generation that left no table failed (and said why once):
            # the next try waits for the identities to move on.
            if self._tried != wanted and (self._building is None or not self._building.is_alive()):
                self._tried = wanted
                self._building = threading.Thread(
                    target=self._build_logged, name="researcher-table", daemon=True
                )
                self._building.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background read; whether a table has been read."""
        building = self._building
        if building is not None:
            building.join(timeout)
        return self._generation is not None

    def _build_logged(self) -> None:
        try:
            self.build()
        except (sqlite3.Error, OSError) as exc:  # SQLite keeps counting; say why once
            log.warning("researcher table not read (%s); the facet comes from SQLite", exc)

    def facet(self, docids: Sequence[int], size: int = 30) -> tuple[FacetCount, ...]:
        """The researchers of these papers, most authorships first (ties: the smaller id),
        as ``People.facet`` counts them."""
        with self._lock:
            starts, rids = self._starts, self._rids
        ids = np.asarray(docids, np.int64)
        ids = ids[(ids >= 0) & (ids < len(starts) - 1)]
        first, lengths = starts[ids], starts[ids + 1] - starts[ids]
        total = int(lengths.sum())
        if not total:
            return ()
        # The positions of every paper's slice, end to end: each slice's start repeated
        # over its length, plus the offset within it.
        offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        found, counts = np.unique(rids[np.repeat(first, lengths) + offsets], return_counts=True)
        order = np.lexsort((found, -counts))[:size]
        return tuple(FacetCount(str(int(found[i])), int(counts[i])) for i in order)
