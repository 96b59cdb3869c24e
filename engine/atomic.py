"""The one way files are replaced atomically: write a uniquely named temp file beside the
target, fsync it, rename it over the target, fsync the directory.

A unique temp name (``mkstemp``) lets writers race: two processes saving the manifest at
once each rename their own complete file (the last one wins) instead of one renaming or
truncating the other's half-written ``manifest.json.tmp``. Names end in ``.tmp`` (backups
skip them) and start with a dot; ``sweep_temp_files`` removes those a killed writer left.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STALE_SECONDS = 3600.0  # a temp file this old belongs to no live writer


def write_atomically(target: Path, write: Callable[[Path], object]) -> None:
    """Run ``write(tmp)`` on a fresh temporary file beside ``target``, then move it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        _fsync_dir(target.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def sweep_temp_files(folder: Path, older_than: float = STALE_SECONDS) -> int:
    """Remove temp files of ``write_atomically`` under ``folder`` older than ``older_than``
    seconds (a younger one may belong to a writer in another process)."""
    removed = 0
    cutoff = time.time() - older_than
    for path in folder.rglob(".*.tmp"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except OSError:  # gone already, or not ours to remove
            continue
    return removed


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some filesystems do not open directories
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
