"""The vector segment files: one ``.npz`` per embedding checkpoint (docids, the hash of the
text each vector was computed from, float32 vectors), numbered ``seg-00000001.npz`` on, in
one folder per model. Written by temp-file-and-rename, read without pickle; a malformed one
is an error naming the file and what to do (``engine.vectors`` keeps the live index).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from papersift.core.errors import IndexVersionError
from papersift.engine.atomic import write_atomically

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
_SEGMENT = re.compile(r"^seg-(\d{8})\.npz$")


class _BadSegment(Exception):
    pass


def _bad(path: Path, reason: str) -> IndexVersionError:
    return IndexVersionError(
        f"vector segment {path} is malformed: {reason}; stop the server and run `papersift "
        "doctor --fix` (it moves the file aside and queues its papers again), then `papersift "
        "index` to embed them"
    )


def model_dir_name(model_id: str) -> str:
    """A folder name for a model id (vectors of different models never share a folder)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)


def segment_paths(folder: Path) -> list[Path]:
    """The segments of ``folder``, oldest first."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _SEGMENT.match(p.name))


def write_segment(
    folder: Path, docids: IntArray, hashes: Sequence[str], vectors: FloatArray
) -> Path:
    """Persist one checkpoint in ``folder`` atomically, numbered after the last; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    existing = segment_paths(folder)
    n = int(_SEGMENT.match(existing[-1].name).group(1)) + 1 if existing else 1  # type: ignore[union-attr]
    path = folder / f"seg-{n:08d}.npz"

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                docids=docids.astype(np.int64),
                hashes=np.asarray(list(hashes), dtype=np.str_),
                vectors=vectors.astype(np.float32),
            )

    write_atomically(path, write)
    return path


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


def stored_dim(folder: Path) -> int | None:
    """The vector width of the first segment in ``folder`` from its array header alone
    (no vectors read), or None without a readable one."""
    fmt = np.lib.format
    for path in segment_paths(folder)[:1]:
        try:
            with zipfile.ZipFile(path) as z, z.open("vectors.npy") as fh:
                major, _ = fmt.read_magic(fh)
                read = fmt.read_array_header_1_0 if major == 1 else fmt.read_array_header_2_0
                shape = read(fh)[0]
            return int(shape[1]) if len(shape) == 2 else None
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            return None
    return None


def read_segment_keys(path: Path, *, hashes: bool = True) -> tuple[IntArray, npt.NDArray[np.str_]]:
    """A segment's docids and text hashes (empty unless ``hashes``), without its vectors."""
    try:
        with np.load(path, allow_pickle=False) as z:
            docids = z["docids"]
            keys = z["hashes"] if hashes else np.empty(docids.shape, np.str_)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise _bad(path, f"it cannot be read ({exc})") from None
    if docids.ndim != 1 or keys.shape != docids.shape:
        raise _bad(path, f"docids {docids.shape} and hashes {keys.shape} do not line up")
    return docids.astype(np.int64), keys


def segment_rows(path: Path) -> int:
    """The vectors a segment holds (0 once it is gone)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return len(z["docids"])
    except FileNotFoundError:
        return 0
