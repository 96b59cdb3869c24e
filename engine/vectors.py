"""The FAISS vector index, keyed by docid, with its vectors kept as plain ``.npz`` segments.

Each embedding checkpoint writes one immutable segment (docids, the hash of the text each
vector was computed from, float32 vectors) by temp-file-and-rename, so a crash loses at most
the segment being written. A vector is live only while its text hash equals the paper's
current one in the store: that needs no other bookkeeping to be committed first, so a reader
in another process can load a segment the moment it appears. ``compact`` folds all
segments into one.
"""

from __future__ import annotations

import os
import re
import threading
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

from papersift.errors import IndexVersionError

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
# Current text hash of each of these docids (papers that no longer exist are left out).
HashLookup = Callable[[Sequence[int]], dict[int, str]]
_SEGMENT = re.compile(r"^seg-(\d{8})\.npz$")


class _BadSegment(Exception):
    pass


def _bad(path: Path, reason: str) -> IndexVersionError:
    return IndexVersionError(
        f"vector segment {path} is malformed: {reason}; stop the server, move the file out "
        "of the folder, then run `papersift doctor --fix` and `papersift index` to embed its "
        "papers again"
    )


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

    def write_segment(self, docids: IntArray, hashes: Sequence[str], vectors: FloatArray) -> Path:
        """Persist one checkpoint atomically and return its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        existing = self.segments()
        n = int(_SEGMENT.match(existing[-1].name).group(1)) + 1 if existing else 1  # type: ignore[union-attr]
        path = self.folder / f"seg-{n:08d}.npz"
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                docids=docids.astype(np.int64),
                hashes=np.asarray(list(hashes), dtype=np.str_),
                vectors=vectors.astype(np.float32),
            )
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return path

    @staticmethod
    def read_segment(path: Path, dim: int | None = None) -> tuple[IntArray, list[str], FloatArray]:
        """One segment's (docids, text hashes, vectors); IndexVersionError if the file is no
        segment of ours (missing arrays, mismatched shapes, another dimension, not an npz).

        Segments are written atomically, so a malformed one is corruption or a foreign file,
        never an interrupted write: fail clearly rather than drop vectors the store still
        counts as embedded (semantic search would silently miss those papers).
        """
        try:
            loaded = np.load(path, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise _BadSegment("it is a single array, not an .npz of arrays")
            with loaded as z:
                missing = {"docids", "hashes", "vectors"} - set(z.files)
                if missing:
                    raise _BadSegment(f"it has no {', '.join(sorted(missing))} array")
                docids, hashes, vectors = z["docids"], z["hashes"], z["vectors"]
        except FileNotFoundError:
            raise
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise _bad(path, f"it cannot be read ({exc})") from None
        except _BadSegment as exc:
            raise _bad(path, str(exc)) from None
        n = len(docids) if docids.ndim == 1 else -1
        if n < 0 or docids.dtype.kind not in "iu" or hashes.shape != (n,) or vectors.ndim != 2:
            raise _bad(
                path,
                f"its arrays do not line up (docids {docids.shape} {docids.dtype}, hashes "
                f"{hashes.shape}, vectors {vectors.shape})",
            )
        if vectors.shape[0] != n or (dim is not None and vectors.shape[1] != dim):
            raise _bad(path, f"it holds vectors {vectors.shape} for {n} docids of dimension {dim}")
        return docids.astype(np.int64), [str(h) for h in hashes], vectors.astype(np.float32)

    def load(self, current: HashLookup) -> None:
        """(Re)build the index from all segments, keeping vectors of current texts only."""
        paths = self.segments()
        ids, _, vecs = self._collect(paths, current)
        index = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
        if len(ids):
            index.add_with_ids(vecs, ids)
        with self._lock:
            self._index = index
            self._loaded = {p.name for p in paths}

    def load_new(self, current: HashLookup) -> int:
        """Add segments written since the last load (by this or another process)."""
        new = [p for p in self.segments() if p.name not in self._loaded]
        if not new:
            return 0
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
                ids, hashes, vecs = self.read_segment(p, self.dim)
            except FileNotFoundError:  # compacted away by another process meanwhile
                continue
            now = current(ids.tolist())
            keep = np.fromiter(
                (now.get(int(d)) == h for d, h in zip(ids, hashes, strict=True)), bool, len(ids)
            )
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
        """Fold every segment into one (crash-safe: the new one is written first)."""
        old = self.segments()
        if len(old) <= 1:
            return
        ids, hashes, vecs = self._collect(old, current)
        new = self.write_segment(ids, hashes, vecs)
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
