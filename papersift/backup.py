"""``papersift backup DEST``: a consistent copy of the data directory, safe while serving.

Restore is "stop the server, copy DEST back as the data directory, start": on open,
``DataDir.sync_lexical`` replays whatever the copied Tantivy index had not absorbed yet.

Why this order. The store records ``lexical_seq``, the last store change the Tantivy index
has absorbed; a writer commits Tantivy first and then raises ``lexical_seq``. A restored copy
is consistent when its Tantivy commit holds every change up to the copied ``lexical_seq``
(``sync_lexical`` replays only later ones) and no change *newer* than the copied store (a
paper Tantivy knows but the store does not would never be removed). So:

1. read Tantivy's ``meta.json`` (its current commit);
2. copy the store with SQLite's online backup API (one transaction-consistent snapshot);
3. copy the segment files that ``meta.json`` lists, then read ``meta.json`` again.

If the commit did not change from 1 to 3, it was made before the store snapshot (so it holds
nothing newer than the store) and no later commit could have raised the snapshot's
``lexical_seq`` past it: the copy is consistent. If it changed (a commit or a merge ran
meanwhile), start again. Copying the store *last* would be wrong: a commit between the
Tantivy copy and the store copy raises ``lexical_seq`` past what the copied Tantivy holds,
and those papers would be missing from keyword search for good. Vector segments are
immutable and written before the store marks papers embedded, so copying them after the
store covers every paper the store calls embedded; extra vectors are ignored on load.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papersift.core.config import Config
from papersift.core.errors import PapersiftError, not_a_folder, not_writable, unwritable
from papersift.core.wording import counted
from papersift.engine.datadir import MANIFEST, read_manifest
from papersift.engine.members import FILENAME as MEMBERS_FILE
from papersift.engine.members import SECRET_FILE
from papersift.engine.store import DatabaseError
from papersift.engine.store_files import backup_store, copy_sqlite

ATTEMPTS = 20
# Copied above in order, or (models/: the float32 graph) rebuilt on first use; quarantine/
# holds what ``doctor --fix`` could not read.
SKIP_DIRS = {"lexical", "vectors", "models", "quarantine"}


class BackupError(PapersiftError):
    """The backup could not be taken (no data directory, destination exists, ...)."""


@dataclass(frozen=True)
class BackupReport:
    dest: Path
    papers: int
    files: int
    bytes: int
    attempts: int
    seconds: float
    damaged: tuple[str, ...] = ()  # vector files copied as they are but unreadable

    def line(self) -> str:
        line = (
            f"backed up {counted(self.papers, 'paper')} to {self.dest}: "
            f"{counted(self.files, 'file')}, "
            f"{self.bytes / 2**20:.1f} MiB in {self.seconds:.1f} s"
        )
        if self.damaged:
            line += (
                f"\nwarning: {counted(len(self.damaged), 'vector file')} cannot be read "
                f"({', '.join(self.damaged[:3])}{', ...' if len(self.damaged) > 3 else ''}): "
                "this backup has them as they are; run `papersift doctor` on the data directory"
            )
        return line

    def json(self) -> dict[str, Any]:
        return {
            "dest": str(self.dest),
            "papers": self.papers,
            "files": self.files,
            "bytes": self.bytes,
            "attempts": self.attempts,
            "seconds": round(self.seconds, 3),
            "damaged": list(self.damaged),
        }


def backup(config: Config, dest: Path) -> BackupReport:
    """Copy ``config``'s data directory into the new folder ``dest`` (see the module doc)."""
    start = time.monotonic()
    root = config.data_dir
    if root.exists() and not root.is_dir():
        raise not_a_folder(root)
    if read_manifest(root) is None or not (root / "papers.sqlite").is_file():
        raise BackupError(f"no papersift data directory at {root}")
    made = _prepare(root, dest)
    try:
        return _copy(root, dest, start)
    except BaseException as exc:
        # Leave nothing behind: a rerun would find the destination not empty.
        for path in [made] if made is not None else list(dest.iterdir()):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        reason = unwritable(root) if isinstance(exc, DatabaseError) else None
        if reason is not None:  # SQLite writes beside a store even to copy it (its WAL)
            raise not_writable(root, reason) from None
        raise


def _copy(root: Path, dest: Path, start: float) -> BackupReport:
    """Copy into the empty folder ``dest`` in the order the module doc gives."""
    for attempt in range(1, ATTEMPTS + 1):
        before = _read_meta(root)
        papers = backup_store(root / "papers.sqlite", dest / "papers.sqlite")
        copied = _copy_lexical(root / "lexical", dest / "lexical", before)
        if copied and _read_meta(root) == before:
            break
        shutil.rmtree(dest / "lexical", ignore_errors=True)
        time.sleep(0.05 * attempt)  # let the commit or merge in flight finish
    else:
        raise BackupError(f"the lexical index kept changing over {ATTEMPTS} tries; retry later")
    damaged = _copy_vectors(root / "vectors", dest / "vectors")
    members = root / MEMBERS_FILE  # the lab's accounts and libraries (issue 19)
    if members.is_file():
        copy_sqlite(members, dest / MEMBERS_FILE).close()
        (dest / MEMBERS_FILE).chmod(0o600)
    if (root / SECRET_FILE).is_file():  # the session key: restored sessions stay valid
        shutil.copy2(root / SECRET_FILE, dest / SECRET_FILE)
    for extra in sorted(root.iterdir()):  # e.g. enrich-cache/: plain files, no ordering needs
        # A folder with a manifest is a data directory of its own (an old backup placed
        # here before such destinations were refused): copying it would nest every backup.
        if extra.is_dir() and extra.name not in SKIP_DIRS and not (extra / MANIFEST).exists():
            shutil.copytree(extra, dest / extra.name, ignore=shutil.ignore_patterns("*.tmp"))
    shutil.copy2(root / MANIFEST, dest / MANIFEST)
    files = [p for p in dest.rglob("*") if p.is_file()]
    return BackupReport(
        dest=dest,
        papers=papers,
        files=len(files),
        bytes=sum(p.stat().st_size for p in files),
        attempts=attempt,
        seconds=time.monotonic() - start,
        damaged=tuple(damaged),
    )


def _prepare(root: Path, dest: Path) -> Path | None:
    """Create the empty folder ``dest``, or say in one line why it cannot be the backup;
    returns the outermost folder made (``dest`` or a parent), None if ``dest`` was there.

    A destination inside the data directory is refused: every later backup would copy it.
    """
    try:
        inside = dest.resolve()  # symlinks followed: a link into the data directory counts
        home = root.resolve()
        if inside == home or home in inside.parents:
            raise BackupError(
                f"backup destination {dest} is inside the data directory {root}; "
                "choose a folder outside it"
            )
        if dest.exists() and not dest.is_dir():
            raise BackupError(f"backup destination {dest} exists and is not a folder")
        if dest.is_dir() and any(dest.iterdir()):
            raise BackupError(f"backup destination {dest} exists and is not empty")
        missing = [p for p in (dest, *dest.parents) if not p.exists()]
        dest.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (resolve)
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BackupError(f"cannot create backup destination {dest}: {reason}") from None
    return missing[-1] if missing else None


def _read_meta(root: Path) -> bytes:
    try:
        return (root / "lexical" / "meta.json").read_bytes()
    except FileNotFoundError:
        raise BackupError(f"{root / 'lexical'} has no meta.json; run `papersift doctor`") from None


def _copy_lexical(source: Path, target: Path, meta: bytes) -> bool:
    """Copy the files of the commit ``meta`` describes; False if one vanished meanwhile."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    segments = {s["segment_id"].replace("-", "") for s in json.loads(meta)["segments"]}
    try:
        for path in sorted(source.iterdir()):
            if path.name.split(".")[0] in segments:
                shutil.copy2(path, target / path.name)
    except FileNotFoundError:  # merged away and garbage-collected by the writer
        return False
    present = {p.name.split(".")[0] for p in target.iterdir()}
    (target / "meta.json").write_bytes(meta)
    return segments <= present


def _copy_vectors(source: Path, target: Path) -> list[str]:
    """Copy every segment of every model; re-list when compaction removed one meanwhile
    (it writes the folded segment before deleting the old ones, so re-listing finds it).
    Returns the copies that are no readable .npz (their zip directory: a truncated file
    fails there), so a damaged file is not kept in backups unnoticed."""
    damaged: list[str] = []
    if not source.is_dir():
        return damaged
    for model in sorted(p for p in source.iterdir() if p.is_dir()):
        done: set[str] = set()
        while True:
            todo = [p for p in sorted(model.iterdir()) if p.suffix == ".npz"]
            todo = [p for p in todo if p.name not in done]
            if not todo:
                break
            (target / model.name).mkdir(parents=True, exist_ok=True)
            for p in todo:
                with contextlib.suppress(FileNotFoundError):  # folded away: re-listed
                    shutil.copy2(p, target / model.name / p.name)
                    if not _readable_npz(target / model.name / p.name):
                        damaged.append(f"{model.name}/{p.name}")
                graph = p.with_suffix(".hnsw")  # engine.ann: rebuilt by compaction if absent
                with contextlib.suppress(FileNotFoundError):
                    shutil.copy2(graph, target / model.name / graph.name)
                done.add(p.name)
    return damaged


def _readable_npz(path: Path) -> bool:
    """Whether ``path`` opens as a zip (an .npz) holding the three arrays of a segment."""
    try:
        with zipfile.ZipFile(path) as z:
            return {"docids.npy", "hashes.npy", "vectors.npy"} <= set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
