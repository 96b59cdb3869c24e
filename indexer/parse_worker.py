"""Read and parse a snapshot file in a child process, so the importing process only writes.

Decompressing and parsing costs about a quarter of an import; in a second process it
overlaps with the store and Tantivy writes of the main one.  The child runs SnapshotReader
itself, so papers, skipped lines and errors are exactly its own.  Papers cross the pipe as
tuples of primitives, a few batches at a time, so memory stays bounded: pickling the Paper
dataclass costs ~60 us a paper there and back, the tuples ~8 us in the child and ~6-14 us
here, rebuilding included (more when the collector has many live objects to scan).  The child
is started with "spawn": the importing process has Tantivy and onnxruntime threads, after
which fork is unsafe.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import signal
import threading
import weakref
from collections.abc import Callable, Generator, Iterator
from datetime import date
from itertools import islice
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from papersift.core.errors import ImportFormatError
from papersift.core.paper import Author, Paper
from papersift.indexer.snapshot import SkippedLine, SnapshotReader

__all__ = ["CHILD_MIN_BYTES", "CHILD_MIN_PAPERS", "ParallelReader"]

# Below these a file is read in-process.  Starting the child takes ~0.12 s and the first
# batch ~0.2 s more, before which nothing overlaps; with a consumer spending 300 us a paper
# the child breaks even at ~4,000-8,000 papers (plain 5-10 MB, .gz 2-4 MB, .xz 1-2 MB) and
# saves ~0.1 s on the 3 MB demo corpus.  One size for all compressions keeps it simple.
CHILD_MIN_BYTES = 4_000_000
CHILD_MIN_PAPERS = 6_000  # a smaller ``limit`` reads in-process whatever the file size
QUEUED_BATCHES = 3  # pickled batches the child may hold ahead of the parent (~2.5 MB each)
_STOP_WAIT = 5.0  # seconds to wait for the child to exit before killing it

Row = tuple[Any, ...]
Message = tuple[Any, ...]


class ParallelReader:
    """Like SnapshotReader but parses in a child process; iterating yields lists of Papers.

    Each list holds ``batch`` papers (the last one fewer), in file order; ``limit`` caps the
    papers read, like islice over SnapshotReader.  ``on_skip`` is called in this process,
    for the lines up to a batch's last paper before the batch is yielded.  ``bytes_read``
    of ``total_bytes`` is the progress, updated per batch.  An ImportFormatError of the file
    is raised after the papers before the damage were yielded; a child that dies otherwise
    raises RuntimeError.  ``in_process`` forces (True) or forbids (False) reading here;
    by default small files and small limits are read here.  The child is started with
    "spawn", which runs the main module again: a script must keep its work under
    ``if __name__ == "__main__"``, and a frozen executable must call
    ``multiprocessing.freeze_support()`` first.
    """

    def __init__(
        self,
        path: Path,
        on_skip: Callable[[SkippedLine], None] | None = None,
        *,
        limit: int | None = None,
        batch: int = 2000,
        in_process: bool | None = None,
    ) -> None:
        if batch < 1 or (limit is not None and limit < 0):
            raise ValueError(f"batch must be positive and limit not negative: {batch}, {limit}")
        self.path = path
        self.on_skip = on_skip
        self.limit = limit
        self.batch = batch
        self.total_bytes = SnapshotReader(path).total_bytes  # ImportFormatError if unreadable
        self.bytes_read = 0
        if in_process is None:
            small_limit = limit is not None and limit < CHILD_MIN_PAPERS
            in_process = self.total_bytes < CHILD_MIN_BYTES or small_limit
        self.in_process = in_process
        self.process: BaseProcess | None = None  # the current child, for tests
        self._current: weakref.ref[Generator[list[Paper], None, None]] | None = None

    def __iter__(self) -> Iterator[list[Paper]]:
        return self.batches()

    def __enter__(self) -> ParallelReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def batches(self) -> Iterator[list[Paper]]:
        """The papers in lists of ``batch``; each call reads the file anew."""
        self.close()
        self.bytes_read = 0
        current = self._local() if self.in_process else self._remote()
        self._current = weakref.ref(current)  # dropping the iterator still ends the child
        return current

    def close(self) -> None:
        """End the child, as closing or dropping the iterator does; this (or ``with``) works
        even while an exception's traceback still holds the iterator."""
        current = self._current() if self._current is not None else None
        if current is not None:
            current.close()
        self._current = None

    def _local(self) -> Generator[list[Paper], None, None]:
        reader = SnapshotReader(self.path, self.on_skip)
        try:
            for papers in _chunks(reader, self.limit, self.batch):
                self.bytes_read = reader.bytes_read
                yield papers
        finally:
            self.bytes_read = reader.bytes_read

    def _remote(self) -> Generator[list[Paper], None, None]:
        ctx = multiprocessing.get_context("spawn")
        receiver, sender = ctx.Pipe(duplex=False)
        proc = ctx.Process(
            target=_child,
            args=(str(self.path), self.limit, self.batch, sender),
            name=f"papersift-parse {self.path.name}",
            daemon=True,  # killed with this process if it exits without closing us
        )
        self.process = proc
        finished = False
        try:
            proc.start()
            sender.close()  # else a dead child's pipe would never reach end of file
            while True:
                msg = self._receive(receiver, proc)
                if msg[0] == "batch":
                    _, rows, skips, self.bytes_read = msg
                    if self.on_skip is not None:
                        for skip in skips:
                            self.on_skip(SkippedLine(*skip))
                    if rows:
                        yield [_decode(row) for row in rows]
                    continue
                finished = True  # "end", "format" or "crash": the child exits by itself
                if msg[0] == "format":
                    raise ImportFormatError(msg[1])
                if msg[0] != "end":
                    raise RuntimeError(f"reading {self.path} failed in the parse process: {msg[1]}")
                return
        finally:
            _stop(proc, finished)
            sender.close()
            receiver.close()

    def _receive(self, receiver: Connection, proc: BaseProcess) -> Message:
        try:
            msg: Message = pickle.loads(receiver.recv_bytes())
        except EOFError:
            proc.join(_STOP_WAIT)
            why = f"the process parsing {self.path} died (exit code {proc.exitcode})"
            raise RuntimeError(why) from None
        return msg


def _chunks(reader: SnapshotReader, limit: int | None, size: int) -> Iterator[list[Paper]]:
    """The reader's papers in lists of ``size``; on ImportFormatError the partial list is
    yielded before the error is raised."""
    papers = iter(reader)
    chunk: list[Paper] = []
    try:
        for paper in islice(papers, limit):
            chunk.append(paper)
            if len(chunk) == size:
                yield chunk
                chunk = []
    except ImportFormatError:
        if chunk:
            yield chunk
        raise
    finally:
        if isinstance(papers, Generator):
            papers.close()  # closes the file now, not when collected
    if chunk:
        yield chunk


def _stop(proc: BaseProcess, finished: bool) -> None:
    """Wait for a child that has sent everything; end one that has not.  Never hangs."""
    if proc.pid is None:  # never started
        return
    if not finished:
        proc.terminate()
    proc.join(_STOP_WAIT)
    if proc.is_alive():
        proc.kill()
        proc.join()


def _child(path: str, limit: int | None, size: int, conn: Connection) -> None:
    """The child: parse ``path`` and send pickled messages to ``conn``; a thread sends, so
    parsing goes on while the parent is busy, up to QUEUED_BATCHES ahead."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    out: queue.Queue[bytes | None] = queue.Queue(maxsize=QUEUED_BATCHES)
    sending = threading.Thread(target=_send, args=(out, conn), daemon=True)
    sending.start()

    def put(msg: Message) -> None:
        out.put(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))

    try:
        _produce(Path(path), limit, size, put)
    except Exception as e:  # anything else: one line for the parent to raise
        put(("crash", f"{type(e).__name__}: {e}".replace("\n", " ")))
    finally:
        out.put(None)
        sending.join()
        conn.close()


def _produce(path: Path, limit: int | None, size: int, put: Callable[[Message], None]) -> None:
    skips: list[tuple[int, str, str, str]] = []
    reader = SnapshotReader(path, lambda s: skips.append((s.line, s.reason, s.arxiv_id, s.field)))
    try:
        for papers in _chunks(reader, limit, size):
            put(("batch", [_encode(p) for p in papers], skips, reader.bytes_read))
            skips = []
    except ImportFormatError as e:
        put(("batch", [], skips, reader.bytes_read))
        put(("format", str(e)))
        return
    put(("batch", [], skips, reader.bytes_read))
    put(("end",))


def _send(out: queue.Queue[bytes | None], conn: Connection) -> None:
    try:
        while (data := out.get()) is not None:
            conn.send_bytes(data)
    except OSError:  # the parent is gone; nobody wants the rest
        os._exit(1)


def _encode(p: Paper) -> Row:
    """A Paper as a tuple of primitives: dates as ordinals, authors as tuples."""
    return (
        p.arxiv_id, p.version, p.title, p.abstract,
        tuple((a.name, a.key, a.ids) if a.ids else (a.name, a.key) for a in p.authors),
        p.categories, p.published.toordinal(), p.updated.toordinal(), p.doi, p.journal_ref,
        p.comments, p.license, p.citation_count, p.extra,
    )  # fmt: skip


def _decode(row: Row) -> Paper:
    """The Paper that ``_encode`` made ``row`` of."""
    (arxiv_id, version, title, abstract, authors, categories, published, updated, doi,
     journal_ref, comments, license_, citation_count, extra) = row  # fmt: skip
    return Paper(
        arxiv_id, version, title, abstract, tuple([Author(*a) for a in authors]), categories,
        date.fromordinal(published), date.fromordinal(updated), doi, journal_ref, comments,
        license_, citation_count, extra,
    )  # fmt: skip
