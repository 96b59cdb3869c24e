"""The FAISS vector index, keyed by docid, with its vectors kept as plain ``.npz`` segments.

Each embedding checkpoint writes one immutable segment (docids + float32 vectors) by
temp-file-and-rename, so a crash loses at most the segment being written. On load the
segments are read in order and the last vector of a docid wins; only docids whose current
text was embedded (per the store) are kept. ``compact`` folds all segments into one.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Collection
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
_SEGMENT = re.compile(r"^seg-(\d{8})\.npz$")


def model_dir_name(model_id: str) -> str:
    """A folder name for a model id (vectors of different models never share a folder)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)


class VectorIndex:
    """Exact inner-product search over unit vectors; thread-safe."""

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder
        self.dim = dim
        self._lock = threading.Lock()
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._loaded: set[str] = set()

    @property
    def size(self) -> int:
        return int(self._index.ntotal)

    # -- persistence ---------------------------------------------------------------------

    def segments(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if _SEGMENT.match(p.name))

    def write_segment(self, docids: IntArray, vectors: FloatArray) -> Path:
        """Persist one checkpoint atomically and return its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        existing = self.segments()
        n = int(_SEGMENT.match(existing[-1].name).group(1)) + 1 if existing else 1  # type: ignore[union-attr]
        path = self.folder / f"seg-{n:08d}.npz"
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            np.savez(fh, docids=docids.astype(np.int64), vectors=vectors.astype(np.float32))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return path

    @staticmethod
    def read_segment(path: Path) -> tuple[IntArray, FloatArray]:
        with np.load(path, allow_pickle=False) as z:
            return z["docids"].astype(np.int64), z["vectors"].astype(np.float32)

    def load(self, valid: Collection[int]) -> None:
        """(Re)build the index from all segments, keeping only ``valid`` docids."""
        ids, vecs = self._collect(self.segments(), valid)
        index = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
        if len(ids):
            index.add_with_ids(vecs, ids)
        with self._lock:
            self._index = index
            self._loaded = {p.name for p in self.segments()}

    def load_new(self, valid: Collection[int]) -> int:
        """Add segments written since the last load (by this or another process)."""
        new = [p for p in self.segments() if p.name not in self._loaded]
        if not new:
            return 0
        ids, vecs = self._collect(new, valid)
        self.add(ids, vecs)
        with self._lock:
            self._loaded.update(p.name for p in new)
        return len(ids)

    def _collect(self, paths: list[Path], valid: Collection[int]) -> tuple[IntArray, FloatArray]:
        parts: list[tuple[IntArray, FloatArray]] = []
        for p in paths:
            try:
                parts.append(self.read_segment(p))
            except FileNotFoundError:  # compacted away by another process meanwhile
                continue
        if not parts:
            return np.empty(0, np.int64), np.empty((0, self.dim), np.float32)
        ids = np.concatenate([i for i, _ in parts])
        vecs = np.concatenate([v for _, v in parts])
        # Last occurrence wins: reverse, take first unique, map back.
        rev_unique, rev_pos = np.unique(ids[::-1], return_index=True)
        pos = len(ids) - 1 - rev_pos
        keep = pos[np.isin(rev_unique, np.fromiter(valid, np.int64, len(valid)))]
        keep.sort()
        return ids[keep], np.ascontiguousarray(vecs[keep])

    def compact(self, valid: Collection[int]) -> None:
        """Fold every segment into one (crash-safe: the new one is written first)."""
        old = self.segments()
        if len(old) <= 1:
            return
        ids, vecs = self._collect(old, valid)
        new = self.write_segment(ids, vecs)
        for p in old:
            if p != new:
                p.unlink(missing_ok=True)
        with self._lock:
            self._loaded = {new.name}

    # -- live updates and search ---------------------------------------------------------

    def add(self, docids: IntArray, vectors: FloatArray) -> None:
        """Add or replace vectors in the live index."""
        if not len(docids):
            return
        with self._lock:
            self._index.remove_ids(faiss.IDSelectorBatch(docids))
            self._index.add_with_ids(np.ascontiguousarray(vectors, np.float32), docids)

    def remove(self, docids: IntArray) -> None:
        with self._lock:
            self._index.remove_ids(faiss.IDSelectorBatch(docids))

    def has(self, docid: int) -> bool:
        with self._lock:
            try:
                self._index.reconstruct(int(docid))
            except RuntimeError:
                return False
            return True

    def vector(self, docid: int) -> FloatArray | None:
        with self._lock:
            try:
                return np.asarray(self._index.reconstruct(int(docid)), np.float32)
            except RuntimeError:
                return None

    def search(
        self, query: FloatArray, k: int, allowed: IntArray | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` (docid, cosine) for a unit query; ``allowed`` restricts exactly."""
        q = np.ascontiguousarray(query.reshape(1, -1), np.float32)
        with self._lock:
            k = min(k, int(self._index.ntotal))
            if k <= 0:
                return []
            if allowed is None:
                scores, ids = self._index.search(q, k)
            else:
                if not len(allowed):
                    return []
                sel = faiss.IDSelectorBatch(np.ascontiguousarray(allowed, np.int64))
                params = faiss.SearchParameters()
                params.sel = sel
                scores, ids = self._index.search(q, min(k, len(allowed)), params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
