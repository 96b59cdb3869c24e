"""Where a search's second strand of work runs: beside it while the search has the machine to
itself, in its own thread once other searches are running.

A hybrid search runs Tantivy's two passes beside the query embedding and the vector search
(all release the GIL), which shortens one search's wait. But the two strands then share the
caches and hand work across threads, and a search cost 1.5 ms more CPU so than with the
passes run in turn (in process at 663k papers, 7 of 8 alternating pairs; bench/RESULTS.md,
issue 23, session 21). On a server answering several searches at once the other cores are
busy with those anyway, so the second strand runs inline there.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class InlineExecutor(Executor):
    """Runs each call at once, in the caller's thread; its future is done on return."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # raised where the caller asks for the result, as a pool's
            future.set_exception(exc)
        return future


INLINE = InlineExecutor()


class QueryThreads:
    """The pool of second threads and the count of searches running; thread-safe."""

    def __init__(self) -> None:
        # A second thread never submits work itself, so a search waiting on one cannot
        # deadlock the pool.
        self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2, thread_name_prefix="query")
        self._lock = threading.Lock()
        self._running = 0

    @contextlib.contextmanager
    def searching(self) -> Iterator[None]:
        """Count a search as running for the block."""
        with self._lock:
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1

    def executor(self) -> Executor:
        """The pool while at most one search runs; inline when more do."""
        return self._pool if self._running <= 1 else INLINE

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
