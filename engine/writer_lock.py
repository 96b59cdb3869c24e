"""One writer at a time per data directory, across processes and threads.

Every command and server job that writes (import, index, harvest, add, reindex, enrich,
import-ror, and the scheduled jobs) holds this lock for its run, so a CLI import and the
server's harvest job no longer race for Tantivy's writer (``LockBusy``) and two embedders
never embed the same papers. It is an advisory ``flock`` on ``<data>/writer.lock``: the
kernel drops it when its holder dies, even by kill -9, so nothing stale is left to clear.
The file also says who holds it, for the message of whoever waits, and is cleared on release.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from papersift.core.errors import PapersiftError, make_data_dir, not_writable

LOCK_NAME = "writer.lock"
_POLL = 0.2  # seconds between tries while waiting
_guard = threading.Lock()
# Per data directory, in this process: a thread lock (flock alone does not order the threads
# of one process) and how deep the holding thread has nested (it may take the lock again).
_local: dict[Path, tuple[threading.RLock, list[int]]] = {}


class WriterBusy(PapersiftError):
    """Another papersift run writes to this data directory; the message says which."""


def holder(root: Path) -> str:
    """Who holds (or last held) the lock: ``"pid 123 (import, since 12:00:01 UTC)"``."""
    try:
        info = json.loads((root / LOCK_NAME).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return "another papersift run"
    when = time.strftime("%H:%M:%S UTC", time.gmtime(float(info.get("since", 0))))
    return f"pid {info.get('pid', '?')} ({info.get('what', '?')}, since {when})"


@contextmanager
def writer_lock(root: Path, what: str, *, wait: float = 0.0) -> Iterator[None]:
    """Hold the data directory's writer lock for the block; ``what`` names the holder.

    Waits up to ``wait`` seconds, then raises WriterBusy naming the holder. The thread that
    holds it may take it again (nested blocks).
    """
    make_data_dir(root)
    key = root.resolve()
    with _guard:
        rlock, depth = _local.setdefault(key, (threading.RLock(), [0]))
    deadline = time.monotonic() + wait
    if not (rlock.acquire(timeout=wait) if wait > 0 else rlock.acquire(blocking=False)):
        raise WriterBusy(_busy(root, what))
    try:
        if depth[0]:  # this thread holds the flock already
            depth[0] += 1
            try:
                yield
            finally:
                depth[0] -= 1
            return
        try:
            fd = os.open(key / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a read-only mount, no permission
            raise not_writable(root, exc.strerror or type(exc).__name__) from None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise WriterBusy(_busy(root, what)) from None
                    time.sleep(_POLL)
            note = json.dumps({"pid": os.getpid(), "what": what, "since": time.time()})
            os.ftruncate(fd, 0)
            os.pwrite(fd, note.encode("utf-8"), 0)
            depth[0] = 1
            try:
                yield
            finally:
                depth[0] = 0
                os.ftruncate(fd, 0)  # no one writes now (``writing``); still ours to clear
        finally:
            os.close(fd)  # releases the flock
    finally:
        rlock.release()


def writing(root: Path) -> str | None:
    """Who holds the writer lock now (``holder``), or None when no one does: whether a
    backlog is being embedded at all, for a note that would otherwise promise it.

    Read off the lock file, which its holder clears on release, and the holder's pid, which
    a holder killed outright leaves behind; not by trying the lock, which would make a
    writer that tries it at that moment fail as busy."""
    try:
        info = json.loads((root / LOCK_NAME).read_text(encoding="utf-8") or "{}")
        pid = int(info["pid"])
    except (OSError, ValueError, TypeError, KeyError):  # none, cleared, or being written
        return None
    if pid != os.getpid():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:  # died holding it: the kernel dropped its lock
            return None
        except PermissionError:  # alive, another user's
            pass
    return holder(root)


def _busy(root: Path, what: str) -> str:
    return f"{holder(root)} is writing to {root}; run {what} again when it finishes"
