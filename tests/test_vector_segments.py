"""Vector segments that are not what we wrote (missing arrays, mismatched shapes, another
dimension, not an .npz at all) fail with a clear IndexVersionError naming the file; and a
search from any thread runs FAISS on one OpenMP thread."""

from __future__ import annotations

import threading
from pathlib import Path

import faiss
import numpy as np
import pytest

from papersift.core.errors import IndexVersionError
from papersift.engine.vectors import VectorIndex

DIM = 4


def _index(tmp_path: Path) -> VectorIndex:
    index = VectorIndex(tmp_path / "vectors", DIM)
    vecs = np.eye(DIM, dtype=np.float32)[:3]
    index.write_segment(np.array([1, 2, 3]), ["a", "b", "c"], vecs)
    return index


def _current(docids: object) -> dict[int, str]:
    return {1: "a", 2: "b", 3: "c"}


def _write(index: VectorIndex, **arrays: object) -> Path:
    path = index.folder / "seg-00000002.npz"
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]
    return path


def test_a_good_segment_loads(tmp_path: Path) -> None:
    index = _index(tmp_path)
    index.load(_current)
    assert index.size == 3 and index.search(np.eye(DIM, dtype=np.float32)[1], 1)[0][0] == 2


def test_a_search_from_a_new_thread_uses_one_openmp_thread(tmp_path: Path) -> None:
    """libgomp keeps the thread count per calling thread: the server's request threads
    must pin their own, not rely on the main thread's setting."""
    index = _index(tmp_path)
    index.load(_current)
    seen: list[int] = []

    def request() -> None:
        index.search(np.eye(DIM, dtype=np.float32)[0], 2)
        seen.append(faiss.omp_get_max_threads())

    worker = threading.Thread(target=request)
    worker.start()
    worker.join()
    assert seen == [1]


GOOD = {"docids": np.array([4]), "hashes": np.array(["d"]), "vectors": np.ones((1, DIM))}


@pytest.mark.parametrize(
    ("arrays", "reason"),
    [
        ({"docids": GOOD["docids"], "vectors": GOOD["vectors"]}, "no hashes array"),
        ({"ids": GOOD["docids"], "embeddings": GOOD["vectors"]}, "no docids, hashes, vectors"),
        ({**GOOD, "hashes": np.array(["d", "e"])}, "do not line up"),
        ({**GOOD, "vectors": np.ones((2, DIM))}, "for 1 docids"),
        ({**GOOD, "vectors": np.ones((1, DIM + 1))}, "of dimension 4"),
        ({**GOOD, "vectors": np.ones(DIM)}, "do not line up"),
        ({**GOOD, "docids": np.array(["x"])}, "do not line up"),
    ],
)
def test_a_malformed_segment_is_a_clear_error(
    tmp_path: Path, arrays: dict[str, object], reason: str
) -> None:
    index = _index(tmp_path)
    path = _write(index, **arrays)
    with pytest.raises(IndexVersionError, match=reason) as err:
        index.load(_current)
    assert str(path) in str(err.value) and "papersift doctor --fix" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "content", [b"", b"not a zip at all", b"PK\x03\x04 truncated", "npy"], ids=str
)
def test_a_file_that_is_no_npz_is_a_clear_error(tmp_path: Path, content: bytes | str) -> None:
    index = _index(tmp_path)
    path = index.folder / "seg-00000002.npz"
    if content == "npy":
        with open(path, "wb") as fh:
            np.save(fh, np.ones((1, DIM)))
    else:
        path.write_bytes(content)  # type: ignore[arg-type]
    with pytest.raises(IndexVersionError, match="malformed"):
        index.load(_current)
    with pytest.raises(IndexVersionError):  # the same when another process's segment appears
        index.load_new(_current)
