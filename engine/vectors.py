"""The FAISS vector index, keyed by docid, with its vectors kept as plain ``.npz`` segments.

Each embedding checkpoint writes one immutable segment (``engine.vector_segments``) by
temp-file-and-rename, so a crash loses at most the segment being written. A vector is live
only while its text hash equals the paper's current one in the store: that needs no other
bookkeeping to be committed first, so a reader in another process can load a segment the
moment it appears. ``compact`` folds all segments into one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

from papersift.core.errors import IndexVersionError
from papersift.engine import ann
from papersift.engine.background import SAMPLE, Background, strided, summarise
from papersift.engine.ranking import EMPTY, Ranking
from papersift.engine.vector_segments import (
    read_segment,
    read_segment_keys,
    segment_paths,
    segment_rows,
    write_segment,
)

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
# Current text hash of each of these docids (papers that no longer exist are left out).
HashLookup = Callable[[Sequence[int]], dict[int, str]]
log = logging.getLogger(__name__)
_search_thread = threading.local()  # whether this thread's OpenMP team is pinned to one


def _one_openmp_thread() -> None:
    """Run this thread's FAISS calls on one OpenMP thread. FAISS parallelises a search over
    queries and we send one at a time, so more threads only add their start-up and
    contention. libgomp keeps the setting per calling thread: set once in the main
    thread, it never reached the server's request threads, where an exact scan of 10k
    vectors then took 2.5 ms of CPU on two threads against 0.73 ms on one. Concurrency
    comes from serving requests in parallel instead."""
    if not getattr(_search_thread, "pinned", False):
        faiss.omp_set_num_threads(1)
        _search_thread.pinned = True


class VectorIndex:
    """Inner-product search over unit vectors; thread-safe.

    Small corpora are searched exactly (a flat index). Above ``ann_above`` vectors,
    compaction builds an HNSW graph of the compacted segment that answers unfiltered and
    broadly filtered searches; vectors written since stay in the flat index, and a filter
    allowing at most ``exact_below`` papers is always scored exactly.
    """

    def __init__(
        self,
        folder: Path,
        dim: int,
        *,
        ann_above: int = 50_000,
        ann_ef: int = 1000,
        exact_below: int = 50_000,
        progress: Callable[[int, int], None] | None = None,
        graphs: bool = True,
        graph_in_memory: bool = False,
    ) -> None:
        self.folder = folder
        self.graphs = graphs  # False: every segment scanned exactly (a reference for recall)
        self.graph_in_memory = graph_in_memory  # read, not mapped (engine.ann.read)
        self.dim = dim
        self.ann_above = ann_above
        self.ann_ef = ann_ef
        self.exact_below = exact_below
        self.progress = progress  # graph build progress (rows done, rows)
        self._lock = threading.Lock()
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._base: ann.GraphBase | None = None
        self._loaded: set[str] = set()
        self.generation = 0  # bumped on every change of what a search can return
        self._checked = threading.Event()  # the graph's rows were checked (engine.ann)
        self._checked.set()
        # The live vectors summarised, with the index's size when it was made.
        self._background: tuple[int, Background | None] | None = None
        self._background_lock = threading.Lock()

    @property
    def size(self) -> int:
        base = self._base
        return int(self._index.ntotal) + (base.live_count() if base is not None else 0)

    @property
    def has_graph(self) -> bool:
        return self._base is not None

    # -- persistence ---------------------------------------------------------------------

    def segments(self) -> list[Path]:
        return segment_paths(self.folder)

    def write_segment(self, docids: IntArray, hashes: Sequence[str], vectors: FloatArray) -> Path:
        """Persist one checkpoint atomically and return its path."""
        return write_segment(self.folder, docids, hashes, vectors)

    def load(self, current: HashLookup) -> None:
        """(Re)build the index from all segments, keeping vectors of current texts only.

        The oldest segment is served by its graph when it has one (see engine.ann); the
        others go into the exact flat index, and the graph rows they supersede are masked.
        """
        paths = self.segments()
        base = self._open_graph(paths[0], current) if paths and self.graphs else None
        rest = paths[1:] if base is not None else paths
        ids, _, vecs = self._collect(rest, current)
        index = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
        if len(ids):
            index.add_with_ids(vecs, ids)
            if base is not None:
                base.kill(ids)
        with self._lock:
            self._index = index
            self._base = base
            self._loaded = {p.name for p in paths}
            self.generation += 1

    def _open_graph(self, segment: Path, current: HashLookup) -> ann.GraphBase | None:
        path = ann.graph_path(segment)
        if not path.exists():
            return None
        try:
            ids = read_segment_keys(segment, hashes=False)[0]
        except FileNotFoundError:
            return None
        index = ann.read(path, self.dim, len(ids), self.graph_in_memory)
        if index is None:
            return None
        base = ann.GraphBase(index, ids, segment.name)
        # Which rows are still current is checked on a thread: comparing 663k text hashes
        # with the store takes ~1 s, most of a cold start. Until then every row counts as
        # live; a stale one can only be a paper whose text changed since it was embedded
        # (the backlog re-embeds it), and hits on deleted papers are dropped anyway.
        self._checked.clear()
        threading.Thread(
            target=self._check_graph, args=(base, segment, current), name="vector-check",
            daemon=True,
        ).start()  # fmt: skip
        return base

    def _check_graph(self, base: ann.GraphBase, segment: Path, current: HashLookup) -> None:
        try:
            try:
                ids, hashes = read_segment_keys(segment)
            except (FileNotFoundError, IndexVersionError) as exc:  # compacted away meanwhile
                log.warning("vector graph rows left unchecked: %s", exc)
                return
            stale = ~_is_current(ids, hashes, current)
            with self._lock:
                if stale.any():
                    live = base.live.copy()
                    live[stale] = False
                    base.live = live
                    self.generation += 1
        finally:
            self._checked.set()

    def wait_checked(self, timeout: float | None = None) -> bool:
        """Wait until the graph's rows have been checked against the store."""
        return self._checked.wait(timeout)

    def load_new(self, current: HashLookup) -> int:
        """Add segments written since the last load (by this or another process)."""
        new = [p for p in self.segments() if p.name not in self._loaded]
        if not new:
            return 0
        if any(ann.graph_path(p).exists() for p in new):
            self.load(current)  # another process compacted and built a new graph
            return len(new)
        ids, _, vecs = self._collect(new, current)
        self.add(ids, vecs)
        with self._lock:
            self._loaded.update(p.name for p in new)
        return len(ids)

    def mark_loaded(self, path: Path) -> None:
        with self._lock:
            self._loaded.add(path.name)

    def _collect(
        self, paths: list[Path], current: HashLookup
    ) -> tuple[IntArray, list[str], FloatArray]:
        ids_parts: list[IntArray] = []
        hash_parts: list[str] = []
        vec_parts: list[FloatArray] = []
        for p in paths:
            try:
                ids, hashes, vecs = read_segment(p, self.dim)
            except FileNotFoundError:  # compacted away by another process meanwhile
                continue
            keep = _is_current(ids, hashes, current)
            ids_parts.append(ids[keep])
            hash_parts.extend(h for h, k in zip(hashes, keep, strict=True) if k)
            vec_parts.append(vecs[keep])
        if not ids_parts:
            return np.empty(0, np.int64), [], np.empty((0, self.dim), np.float32)
        ids = np.concatenate(ids_parts)
        vecs = np.concatenate(vec_parts)
        # Several vectors of one current text (a re-run after a crash): keep the last.
        _, rev_pos = np.unique(ids[::-1], return_index=True)
        keep_pos = np.sort(len(ids) - 1 - rev_pos)
        kept_hashes = [hash_parts[i] for i in keep_pos]
        return ids[keep_pos], kept_hashes, np.ascontiguousarray(vecs[keep_pos])

    def compact(self, current: HashLookup) -> None:
        """Fold segments into one (crash-safe: the new one is written first) and build its
        graph when there are more than ``ann_above`` vectors.

        When the oldest segment has a graph and what came after it is small (under a tenth
        of it, with under a tenth of its rows masked), only the later segments are folded:
        the graph is kept instead of rebuilt for every small harvest.
        """
        old = self.segments()
        if not old:
            return
        if self._keep_graph(old, current):
            if len(old) > 2:
                self._fold(old[1:], current, graph=False)
            return
        # A lone segment is rewritten only to build or rebuild its graph (a graph kept above
        # has returned already; one with too many masked rows falls through to a rebuild).
        lone = len(old) == 1 and not ann.graph_path(old[0]).exists()
        if lone and segment_rows(old[0]) <= self.ann_above:
            return
        self._fold(old, current, graph=True)

    def _keep_graph(self, old: list[Path], current: HashLookup) -> bool:
        if not ann.graph_path(old[0]).exists():
            return False
        self.wait_checked()
        base_rows = segment_rows(old[0])
        if sum(segment_rows(p) for p in old[1:]) * 10 > base_rows:
            return False
        base = self._base
        if base is None or base.name != old[0].name:
            ids, hashes = read_segment_keys(old[0])
            live = int(_is_current(ids, hashes, current).sum())
        else:
            live = base.live_count()
        return (base_rows - live) * 10 <= base_rows

    def _fold(self, old: list[Path], current: HashLookup, *, graph: bool) -> None:
        ids, hashes, vecs = self._collect(old, current)
        new = self.write_segment(ids, hashes, vecs)
        built = graph and len(ids) > self.ann_above
        if built:
            ann.build(vecs, ann.graph_path(new), self.progress)
        del vecs
        for p in old:
            if p != new:
                p.unlink(missing_ok=True)
                ann.graph_path(p).unlink(missing_ok=True)
        folded_base = self._base is not None and self._base.name in {p.name for p in old}
        if built or folded_base:
            self.load(current)  # serve from the new graph
        else:
            with self._lock:
                self._loaded = (self._loaded - {p.name for p in old}) | {new.name}

    # -- live updates and search ---------------------------------------------------------

    def add(self, docids: IntArray, vectors: FloatArray) -> None:
        """Add or replace vectors in the live index."""
        if not len(docids):
            return
        with self._lock:
            self._index.remove_ids(faiss.IDSelectorBatch(docids))
            self._index.add_with_ids(np.ascontiguousarray(vectors, np.float32), docids)
            if self._base is not None:
                self._base.kill(docids)
            self.generation += 1

    def remove(self, docids: IntArray) -> None:
        with self._lock:
            self._index.remove_ids(faiss.IDSelectorBatch(docids))
            if self._base is not None:
                self._base.kill(docids)
            self.generation += 1

    def background(self) -> Background | None:
        """The live vectors' mean and covariance (``engine.background``; None for fewer
        than ``MIN_VECTORS``), made again once their number has moved by more than a
        fiftieth: a query's background changes slowly with the corpus, and a summary of
        ``SAMPLE`` vectors costs ~0.1 s."""
        size = self.size
        known = self._background
        if known is not None and abs(size - known[0]) * 50 <= size:
            return known[1]
        with self._background_lock:
            known = self._background
            if known is None or abs(size - known[0]) * 50 > size:
                known = self._background = (size, summarise(self._sample(SAMPLE)))
        return known[1]

    def _sample(self, limit: int) -> FloatArray:
        """Up to ``limit`` live vectors, evenly spread over the flat index and the graph."""
        with self._lock:
            flat = faiss.downcast_index(self._index.index)
            n_flat = int(flat.ntotal)
            base = self._base
            live = np.flatnonzero(base.live) if base is not None else np.empty(0, np.int64)
            picks = strided(n_flat + len(live), limit)
            in_flat = picks[picks < n_flat]
            parts = [flat.reconstruct_batch(in_flat)] if len(in_flat) else []
        if base is not None and len(picks) > len(in_flat):
            parts.append(base.flat.reconstruct_batch(live[picks[len(in_flat) :] - n_flat]))
        if not parts:
            return np.empty((0, self.dim), np.float32)
        return np.ascontiguousarray(np.concatenate(parts), np.float32)

    def has(self, docid: int) -> bool:
        return self.vector(docid) is not None

    def vector(self, docid: int) -> FloatArray | None:
        with self._lock:
            try:
                return np.asarray(self._index.reconstruct(int(docid)), np.float32)
            except RuntimeError:
                base = self._base
        return base.vector(docid) if base is not None else None

    def search(
        self, query: FloatArray, k: int, allowed: IntArray | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` (docid, cosine) pairs of ``ranking``."""
        return self.ranking(query, k, allowed).pairs()

    def ranking(self, query: FloatArray, k: int, allowed: IntArray | None = None) -> Ranking:
        """Top ``k`` docids by cosine for a unit query among ``allowed`` docids (all if None).

        Exact without a graph, or when ``allowed`` holds at most ``exact_below`` docids;
        otherwise the graph answers for its rows (approximately) and the flat index for the
        rest (exactly).
        """
        q = np.ascontiguousarray(query.reshape(1, -1), np.float32)
        if k <= 0 or (allowed is not None and not len(allowed)):
            return EMPTY
        _one_openmp_thread()
        if allowed is not None:
            allowed = np.ascontiguousarray(allowed, np.int64)
        with self._lock:
            base = self._base
            found = self._search_flat(q, k, allowed)
        if base is not None:
            if allowed is not None and len(allowed) <= self.exact_below:
                graph = base.search_exact(q, k, allowed)
            else:
                graph = base.search(q, k, self.ann_ef, allowed)
            # Both lists come best first; with nothing embedded since the graph was built
            # (the usual case) there is nothing to merge. Equal scores keep the flat first.
            if len(found):
                both = found.followed_by(graph)
                order = np.argsort(-both.scores, kind="stable")
                found = Ranking(both.ids[order], both.scores[order])
            else:
                found = graph
        return found.head(k)

    def _search_flat(self, q: FloatArray, k: int, allowed: IntArray | None) -> Ranking:
        k = min(k, int(self._index.ntotal))
        if k <= 0:
            return EMPTY
        if allowed is None:
            scores, ids = self._index.search(q, k)
        else:
            params = faiss.SearchParameters()
            sel = faiss.IDSelectorBatch(allowed)
            params.sel = sel
            scores, ids = self._index.search(q, min(k, len(allowed)), params=params)
        found = ids[0] >= 0  # -1: fewer than k vectors (or allowed ones)
        return Ranking(ids[0][found].astype(np.int64), scores[0][found].astype(np.float64))


def _is_current(
    ids: IntArray, hashes: Sequence[str] | npt.NDArray[np.str_], current: HashLookup
) -> npt.NDArray[np.bool_]:
    """Which (docid, text hash) pairs match the store's current text."""
    now = current(ids.tolist())
    return np.fromiter(
        (now.get(int(d)) == h for d, h in zip(ids, hashes, strict=True)), bool, len(ids)
    )
