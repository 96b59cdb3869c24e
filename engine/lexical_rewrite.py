"""Writing the keyword index again as one Tantivy segment: a full replay, and compaction.

Each Tantivy commit leaves a segment, and Tantivy's log merge policy merges segments of like
size only once eight of them pile up: importing 663k papers (a commit every
``indexer.build.LEXICAL_COMMIT``) left seven segments of about 100k papers. A search runs over
each segment and keeps a top k in each, so over one segment instead of those seven hybrid's
any-word top 1,000 took 2.55 ms of CPU against 3.83, and a whole hybrid search 6.7% less
(bench/lexical_segments.py; bench/RESULTS.md, issue 23, session 17). tantivy-py cannot ask
Tantivy to merge, so the index is written again from the store: every paper in one commit, by
a writer with room for them all.
Searches see the old segments until that commit and the new one after it; a crash or a stop
before it leaves the old index as it was.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from papersift.core.paper import Paper
from papersift.core.progress import Progress
from papersift.engine.lexical import LexicalIndex
from papersift.engine.store import PaperStore

log = logging.getLogger(__name__)

# The rewriting writer's memory. Tantivy takes it as the segment grows (800 MB peak RSS in
# all to rewrite 663k papers) and starts another segment once it is full: one segment holds
# about 2.5 million papers, all of arXiv.
REWRITE_HEAP = 2_000_000_000
# Compact once this share of the papers lies outside the segments the last rewrite left.
SCATTERED = 0.2
CHUNK = 5000  # papers read from the store at a time
LAST_REWRITE = "lexical_rewrite"  # store meta: {"segments": n, "at": unix time}


class Stopped(Exception):
    """The rewrite was asked to stop; the index is as it was."""


def segment_sizes(path: Path) -> list[tuple[int, int]]:
    """(live documents, all documents) of each segment of the Tantivy index at ``path``,
    most live first, from its ``meta.json`` ([] when that cannot be read: nothing is then
    compacted)."""
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        sizes = [
            (int(s["max_doc"]) - int((s.get("deletes") or {}).get("num_deleted_docs", 0)),
             int(s["max_doc"]))
            for s in meta["segments"]
        ]  # fmt: skip
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("cannot read the keyword index's segments in %s: %s", path, exc)
        return []
    return sorted(sizes, reverse=True)


def kept_segments(store: PaperStore) -> int:
    """How many segments the last rewrite left (1 unless its writer filled up)."""
    try:
        return max(1, int(json.loads(store.get_meta(LAST_REWRITE) or "{}").get("segments", 1)))
    except (ValueError, TypeError, AttributeError):
        return 1


def scattered(sizes: list[tuple[int, int]], kept: int = 1) -> bool:
    """Whether at least ``SCATTERED`` of the documents of segments of ``sizes``
    (``segment_sizes``; deleted documents included) lie outside the ``kept`` largest."""
    documents = sum(every for _, every in sizes)
    if documents == 0:
        return False
    return 1.0 - sum(live for live, _ in sizes[:kept]) / documents >= SCATTERED


def needs_compaction(lexical: LexicalIndex, store: PaperStore) -> bool:
    """Whether the index is ``scattered`` beyond as many segments as the last rewrite
    left: an index too big for one segment is not written again at every chance."""
    return scattered(segment_sizes(lexical.path), kept_segments(store))


def rewrite(
    lexical: LexicalIndex, store: PaperStore, *, progress: bool = False,
    stop: threading.Event | None = None,
) -> int:  # fmt: skip
    """Replace every document of ``lexical`` with the store's current papers, in one commit;
    returns the papers written. Raises :class:`Stopped` (nothing changed) once ``stop`` is
    set. The caller holds the data directory's writer lock and has nothing uncommitted."""
    docids = sorted(d for d, _ in store.changes_after(0))

    def chunks(bar: Progress) -> Iterator[Sequence[tuple[int, Paper]]]:
        for start in range(0, len(docids), CHUNK):
            if stop is not None and stop.is_set():
                raise Stopped("stopped before the rewrite was committed")
            ids = docids[start : start + CHUNK]
            papers = store.get(ids)
            yield [(d, papers[d]) for d in ids if d in papers]
            bar.update(len(ids))
        # Reached when the writer asks for more: the commit that follows writes the segment
        # (about 10 s of the 55 at 663k papers, timing the adds apart from the commit).
        bar.note("writing the segment")

    with Progress(
        len(docids), "keyword index", unit="paper", bar=progress, log=log, leave=True
    ) as bar:
        written = lexical.replace_all(chunks(bar), REWRITE_HEAP)
    # Also what tells other processes to reload (``DataDir.refresh``): the sequence alone
    # may not change.
    segments = max(1, len(segment_sizes(lexical.path)))
    store.set_meta(LAST_REWRITE, json.dumps({"segments": segments, "at": time.time()}))
    return written
