"""What every route needs from the app: the engine (called off the event loop) and config."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from starlette.requests import Request

from papersift.core.config import Config
from papersift.engine.catalog import category_names
from papersift.engine.examples import Examples, index_examples
from papersift.engine.results import SearchRequest, Stats
from papersift.engine.search import SearchEngine

T = TypeVar("T")
STATS_TTL = 30.0  # seconds a stats snapshot is reused (home page, category checks)


class EngineFailure(RuntimeError):
    """The engine failed in a way Python code does not normally fail (a native panic)."""


class _Panic(Exception):
    """Carries a ``BaseException`` out of an engine thread (``_ordinary_errors``)."""


def _ordinary_errors(fn: Callable[..., T], args: tuple[object, ...]) -> T:
    """``fn(*args)``, a ``BaseException`` that is not an ``Exception`` raised as ``_Panic``.

    A Rust panic inside a native extension (pyo3's ``PanicException``) derives from
    ``BaseException``: the executor would set it on the future and it would escape the
    app's 500 handling. ``AppContext.call`` makes it an ordinary error, logged and answered
    with the plain 500 page."""
    try:
        return fn(*args)
    except Exception:
        raise
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise _Panic(exc) from exc


@dataclass
class _StatsCache:
    stats: Stats | None = None
    at: float = 0.0
    generation: object = None  # the papers' and researchers' generations ``stats`` saw
    known: dict[str, str] | None = None  # known_categories of ``stats``
    cited: bool | None = None  # citations_known of ``stats``


class AppContext:
    """Held in ``app.state.ctx``; the engine is synchronous, so calls run in threads."""

    def __init__(self, engine: SearchEngine, config: Config) -> None:
        self.engine = engine
        self.config = config
        # Searches release the GIL in Tantivy, FAISS and onnxruntime, so one worker per core
        # keeps both cores busy: 35 -> 46 uncached hybrid requests/s at concurrency 8 on the
        # 663k-paper bench directory (2 cores). The loop hands calls to a plain executor:
        # AnyIO's ``to_thread`` (limiter, cancel scopes) cost ~50-85 us more CPU a call.
        workers = config.server.workers or os.cpu_count() or 1
        self._engine_threads = ThreadPoolExecutor(workers, thread_name_prefix="engine")
        self._stats = _StatsCache()
        self._examples: tuple[tuple[object, ...], Examples] | None = None

    async def call(self, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` on an engine thread; a cancelled caller stops waiting, the call
        runs to its end (the engine cannot be interrupted)."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._engine_threads, _ordinary_errors, fn, args)
        except _Panic as wrapped:
            exc = wrapped.args[0]
            raise EngineFailure(f"{type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        """Wait for the engine calls still running (a cancelled request's among them) and
        stop the threads: the engine may be closed after this, not before."""
        self._engine_threads.shutdown(wait=True, cancel_futures=True)

    def _papers_generation(self) -> tuple[object, ...]:
        """Changes with the papers, the researchers and the enrichment, not with the vectors
        (the embedding backlog moves them with every batch): what the stats snapshot and the
        guides' examples are kept for."""
        data = self.engine.data
        return (data.lexical.generation, data.people_generation, data.graph.generation)

    async def stats(self) -> Stats:
        """The index's counts and embedding progress: taken again once the papers or the
        researchers changed (a commit of another process shows with the next refresh, not
        up to ``STATS_TTL`` later: the home page's count, the categories a filter knows),
        else at most every ``STATS_TTL`` seconds (the backlog's progress: vectors change
        with every embedded batch, and a snapshot costs ~10 ms at 663k papers)."""
        now = time.monotonic()
        cached = self._stats
        generation = self._papers_generation()
        if cached.stats is None or now - cached.at > STATS_TTL or generation != cached.generation:
            cached.stats = await self.call(self.engine.stats_with_progress)
            cached.at = now
            cached.generation = generation
            cached.known = None
            cached.cited = None
        return cached.stats

    def last_stats(self) -> Stats | None:
        """The stats snapshot last taken, without taking one (None before the first)."""
        return self._stats.stats

    async def examples(self) -> Examples:
        """The guides' examples (``engine.examples``), worked out again when the papers,
        the researchers or the enrichment changed; not when vectors did (the embedding
        backlog moves them every few seconds) nor the ROR registry (its next change does)."""
        key = self._papers_generation()
        kept = self._examples
        if kept is None or kept[0] != key:
            kept = (key, await self.call(index_examples, self.engine))
            self._examples = kept
        return kept[1]

    def last_examples(self) -> Examples:
        """The examples last worked out, without working them out (none before the first)."""
        return self._examples[1] if self._examples else Examples()

    async def known_categories(self) -> dict[str, str]:
        """Lower-cased category or archive (``cs`` for ``cs.IR``) -> its spelling; built once
        per stats snapshot (every search asks)."""
        stats = await self.stats()
        cached = self._stats
        if cached.known is not None and cached.stats is stats:
            return cached.known
        known = category_names(c.value for c in stats.categories)
        if cached.stats is stats:
            cached.known = known
        return known

    async def citations_known(self) -> bool:
        """Whether any paper has a citation count (enrichment adds them): without one the
        "Most cited" order means nothing, so the pages do not offer it. Once per stats
        snapshot: the most cited paper of the whole index, one hit."""
        stats = await self.stats()
        cached = self._stats
        if cached.cited is not None and cached.stats is stats:
            return cached.cited
        top = await self.call(self.engine.search, SearchRequest(sort="cited", page_size=1))
        cited = bool(top.hits) and top.hits[0].paper.citation_count is not None
        if cached.stats is stats:
            cached.cited = cited
        return cited


def ctx(request: Request) -> AppContext:
    context: AppContext = request.app.state.ctx
    return context
