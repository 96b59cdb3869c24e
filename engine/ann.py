"""An HNSW graph over the compacted vector segment: approximate top-k for large corpora.

A flat scan costs a full pass over every vector per query (93 ms at 663k papers here, one
thread), so once a model has more than ``[search] ann_above`` vectors, compaction also
builds a FAISS HNSW graph of the compacted segment and stores it beside it
(``seg-N.hnsw``, FAISS's own index format, never pickle). A command maps the graph
(``IO_FLAG_MMAP_IFC``: 0.05 s to open at 663k papers against 0.6-0.8 s to read); the server
reads it into memory on huge pages (``[server] graph_in_memory``), where a search costs
10-20% less.

The graph keeps its vectors in float16 (FAISS's scalar quantiser, ``QT_fp16``): half the
memory and file of float32 (690 MB against 1.2 GB at 663k papers), read in 0.6-0.8 s
against 0.9-1.3, a top 1,000 11-15% cheaper with the same recall, scores within 6e-5 of
float32's (bench/graph_fp16.py): far inside what the int8 query embedding moves them. A
graph built before keeps its float32 vectors and is read as it is.

The graph is immutable: rows whose paper has since changed, gone, or got a newer vector in a
later segment are masked out (``live``) at search time. A filter's allowed subset can be
scored exhaustively on the graph's storage, so selective filters never starve.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

from papersift.engine.atomic import write_atomically
from papersift.engine.huge_pages import advise
from papersift.engine.ranking import EMPTY, Ranking

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
log = logging.getLogger(__name__)

HNSW_M = 32  # links per node: 1.2 GB file for 663k x 384 floats, most of it the vectors
# How widely each insertion searches for its links. FAISS's default of 40 left a graph whose
# top 100 held 0.80 of the exact top 100 at 663k papers (efSearch 1,500); 200 gives 0.96 at
# the same efSearch and 0.91 at 1,000, and at 100k 0.995 against 0.97, for a build 4-7x
# longer (46 s for 100k, 311-381 s for 663k on 2 cores). bench/ann_recall.py, RESULTS.md.
EF_CONSTRUCTION = 200
BUILD_CHUNK = 20_000


def graph_path(segment: Path) -> Path:
    """The graph file that belongs to a segment file."""
    return segment.with_suffix(".hnsw")


def new_graph(dim: int, ef_construction: int = EF_CONSTRUCTION) -> faiss.IndexHNSW:
    """An empty graph as compaction builds it: ``HNSW_M`` links, float16 vectors, inner
    product (on unit vectors, the cosine)."""
    fp16 = faiss.ScalarQuantizer.QT_fp16  # the stub wants a ScalarQuantizer; FAISS takes its type
    index = faiss.IndexHNSWSQ(dim, fp16, HNSW_M, faiss.METRIC_INNER_PRODUCT)  # type: ignore[arg-type]
    index.hnsw.efConstruction = ef_construction
    return index


def build(
    vectors: FloatArray, path: Path, progress: Callable[[int, int], None] | None = None
) -> None:
    """Build the graph of ``vectors`` (rows in segment order) and write it atomically."""
    n, dim = vectors.shape
    index = new_graph(dim)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(os.cpu_count() or 1)  # searches pin it to one thread
    try:
        for start in range(0, n, BUILD_CHUNK):
            index.add(np.ascontiguousarray(vectors[start : start + BUILD_CHUNK], np.float32))
            if progress is not None:
                progress(min(n, start + BUILD_CHUNK), n)
    finally:
        faiss.omp_set_num_threads(threads)
    write_atomically(path, lambda tmp: faiss.write_index(index, str(tmp)))


def read(path: Path, dim: int, rows: int, in_memory: bool = False) -> faiss.IndexHNSW | None:
    """The graph at ``path`` if it is one of ``rows`` vectors of ``dim``; else None (the
    caller falls back to exact search, and the next compaction builds it again).

    Mapped by default (0.05 s to open at 663k papers). ``in_memory`` reads it whole (0.6-0.8 s)
    and puts its vectors and links on huge pages, where a search's scattered reads cost
    less (``engine.huge_pages``; collapsed on a thread while it serves): what a server,
    which opens it once, wants."""
    try:
        # read_index already returns the concrete class; downcasting its temporary would
        # free the index with it.
        index = faiss.read_index(str(path), 0 if in_memory else faiss.IO_FLAG_MMAP_IFC)
    except RuntimeError as exc:
        log.warning("ignoring unreadable vector graph %s: %s", path, str(exc).splitlines()[0])
        return None
    if (
        not isinstance(index, faiss.IndexHNSW)
        or index.d != dim
        or index.ntotal != rows
        # float32 (IndexFlat) or float16 (IndexScalarQuantizer) vectors
        or not isinstance(storage := faiss.downcast_index(index.storage), faiss.IndexFlatCodes)
    ):
        log.warning("ignoring vector graph %s: it does not match its segment", path)
        return None
    if in_memory:
        codes = storage.codes
        links = index.hnsw.neighbors  # type: ignore[attr-defined]
        advise(int(codes.data()), codes.size(), wait=False)
        advise(int(links.data()), links.size() * 4, wait=False)  # int32 entries
    return index


@dataclass(frozen=True)
class GraphFacts:
    """What a graph file holds, for ``papersift doctor``: is it built as compaction builds
    one now?"""

    rows: int
    float16: bool  # its vectors in float16 (since 2026-12-06), else float32
    ef_construction: int

    @property
    def current(self) -> bool:
        return self.float16 and self.ef_construction >= EF_CONSTRUCTION


def describe(path: Path) -> GraphFacts | None:
    """The facts of the graph at ``path`` (mapped, not read), or None if it is unreadable."""
    try:
        index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)
    except RuntimeError:
        return None
    if not isinstance(index, faiss.IndexHNSW):
        return None
    storage = faiss.downcast_index(index.storage)
    fp16 = faiss.ScalarQuantizer.QT_fp16
    float16 = isinstance(storage, faiss.IndexScalarQuantizer) and storage.sq.qtype == fp16
    return GraphFacts(int(index.ntotal), float16, int(index.hnsw.efConstruction))


class GraphBase:
    """The graph with the docid of each row and which rows are live.

    ``live`` is replaced, never changed in place, so a search reads one consistent mask
    without holding the vector index's lock. Its count is kept with it: summing 663k
    flags on every search cost 0.3 ms.
    """

    def __init__(self, index: faiss.IndexHNSW, docids: IntArray, name: str) -> None:
        self.index = index
        flat = faiss.downcast_index(index.storage)  # read() checked its type
        assert isinstance(flat, faiss.IndexFlatCodes)
        self.flat: faiss.IndexFlatCodes = flat
        self.docids = docids
        self.name = name
        top = int(docids.max()) + 1 if len(docids) else 0
        self._row_of = np.full(top, -1, np.int64)
        self._row_of[docids] = np.arange(len(docids))
        self.live = np.ones(len(docids), bool)

    @property
    def live(self) -> npt.NDArray[np.bool_]:
        return self._live[0]

    @live.setter
    def live(self, mask: npt.NDArray[np.bool_]) -> None:
        self._live = (mask, int(mask.sum()))

    @property
    def rows(self) -> int:
        return len(self.docids)

    def live_count(self) -> int:
        return self._live[1]

    def rows_of(self, docids: IntArray, live: npt.NDArray[np.bool_] | None = None) -> IntArray:
        """Rows of those docids that are in the graph (and live, when a mask is given)."""
        ids = np.asarray(docids, np.int64)
        ids = ids[(ids >= 0) & (ids < len(self._row_of))]
        rows = self._row_of[ids]
        rows = rows[rows >= 0]
        return rows if live is None else rows[live[rows]]

    def kill(self, docids: IntArray) -> None:
        """Mask the rows of these docids (a newer vector exists, or the paper is gone)."""
        rows = self.rows_of(docids)
        if len(rows) and self.live[rows].any():
            live = self.live.copy()
            live[rows] = False
            self.live = live

    def vector(self, docid: int) -> FloatArray | None:
        rows = self.rows_of(np.array([docid]), self.live)
        if not len(rows):
            return None
        return np.asarray(self.index.reconstruct(int(rows[0])), np.float32)

    def search(
        self, query: FloatArray, k: int, ef: int, allowed: IntArray | None = None
    ) -> Ranking:
        """Approximate top ``k`` live rows (among ``allowed`` docids, if given)."""
        mask, n = self._live
        if allowed is not None:
            live = mask
            mask = np.zeros(self.rows, bool)
            mask[self.rows_of(allowed, live)] = True
            n = int(mask.sum())
        if n == 0 or k <= 0:
            return EMPTY
        params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]  # stub lags
        params.efSearch = max(ef, k)
        if n < self.rows:
            bits = np.packbits(mask, bitorder="little")  # FAISS reads bit i of byte i >> 3
            sel = faiss.IDSelectorBitmap(self.rows, faiss.swig_ptr(bits))
            params.sel = sel
        scores, rows = self.index.search(query, min(k, n), params=params)
        return self._ranking(rows[0], scores[0])

    def search_exact(self, query: FloatArray, k: int, allowed: IntArray) -> Ranking:
        """Top ``k`` among the live rows of ``allowed`` docids, every one scored on the
        graph's storage (float16 vectors, unless the graph predates them)."""
        rows = self.rows_of(allowed, self.live)
        if not len(rows) or k <= 0:
            return EMPTY
        params = faiss.SearchParameters()
        sel = faiss.IDSelectorBatch(np.ascontiguousarray(rows, np.int64))
        params.sel = sel
        scores, found = self.flat.search(query, min(k, len(rows)), params=params)
        return self._ranking(found[0], scores[0])

    def _ranking(self, rows: IntArray, scores: FloatArray) -> Ranking:
        found = rows >= 0  # -1: fewer than k rows (or allowed ones)
        ids = self.docids[rows[found]].astype(np.int64, copy=False)
        return Ranking(ids, scores[found].astype(np.float64))
