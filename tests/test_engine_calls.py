"""How the server runs engine calls off the event loop (``server.context.AppContext.call``):
on at most ``[server] workers`` threads, errors as they are, a native panic as an
ordinary error the app answers with its 500 page."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace

import pytest

from papersift.core.config import Config
from papersift.engine.search import SearchEngine
from papersift.server.context import AppContext, EngineFailure


def test_calls_run_at_most_workers_at_once_and_in_their_threads(
    engine: SearchEngine, built_config: Config
) -> None:
    config = replace(built_config, server=replace(built_config.server, workers=2))
    context = AppContext(engine, config)
    lock = threading.Lock()
    running = peak = 0

    def job(i: int) -> tuple[int, str]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)  # long enough for every call to be waiting meanwhile
        with lock:
            running -= 1
        return i, threading.current_thread().name

    async def six_at_once() -> list[tuple[int, str]]:
        loop_thread = threading.current_thread().name
        out = await asyncio.gather(*(context.call(job, i) for i in range(6)))
        assert loop_thread not in {name for _, name in out}
        return out

    out = asyncio.run(six_at_once())
    assert [i for i, _ in out] == list(range(6))
    assert peak == 2
    assert len({name for _, name in out}) <= 2


def test_an_error_comes_back_as_it_is(engine: SearchEngine, built_config: Config) -> None:
    context = AppContext(engine, built_config)

    def fails() -> None:
        raise ValueError("bad value")

    with pytest.raises(ValueError, match="bad value"):
        asyncio.run(context.call(fails))


def test_a_native_panic_becomes_an_ordinary_error(
    engine: SearchEngine, built_config: Config
) -> None:
    """Tantivy's top-k collector panics on a limit of 0: pyo3's PanicException, which
    derives from BaseException, not Exception."""
    context = AppContext(engine, built_config)
    index = engine.data.lexical.index
    query = index.parse_query("model", ["ti"])

    def zero_limit() -> object:
        return index.searcher().search(query, 0)

    with pytest.raises(EngineFailure, match="PanicException") as caught:
        asyncio.run(context.call(zero_limit))
    assert not isinstance(caught.value.__cause__, Exception)  # the panic itself, kept
    # The threads are still there for the next call.
    assert asyncio.run(context.call(lambda: 41 + 1)) == 42


def test_close_waits_for_a_call_whose_caller_stopped_waiting(
    engine: SearchEngine, built_config: Config
) -> None:
    """A request cancelled mid-search leaves its engine call running; ``close`` (which
    ``serve`` calls before closing the engine) returns only once it has ended."""
    context = AppContext(engine, built_config)
    started, finished = threading.Event(), threading.Event()

    def slow() -> None:
        started.set()
        time.sleep(0.3)
        finished.set()

    async def cancel_while_running() -> None:
        task = asyncio.ensure_future(context.call(slow))
        await asyncio.get_running_loop().run_in_executor(None, started.wait)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_running())
    context.close()
    assert finished.is_set()
