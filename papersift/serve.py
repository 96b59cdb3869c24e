"""Running the one server process: first-start import, background embedding, uvicorn."""

from __future__ import annotations

import errno
import gc
import logging
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from papersift.core.config import Config
from papersift.core.errors import PapersiftError
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine
from papersift.engine.word_lists import load_all as load_word_lists
from papersift.indexer.build import bootstrap_if_empty

log = logging.getLogger(__name__)


class Stopped(BaseException):
    """SIGTERM or SIGINT, raised again by uvicorn once it has shut down gracefully: the
    server stops as asked, after its jobs have (``serve``'s cleanup)."""


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While uvicorn runs it handles SIGTERM and SIGINT itself, then restores the handlers
    it found and raises the signal again. Found the default, SIGTERM killed the process
    there, before the jobs stopped at a checkpoint and logged their end (a systemd stop
    looked like a crash). These handlers turn it into ``Stopped`` instead."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise Stopped(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def check_address(host: str, port: int) -> None:
    """Bind ``host``:``port`` the way the server will, and let go: a port in use is one
    line now, not after the import and the model load (the race left is caught in serve)."""
    where = f"port {port} on {host or 'all addresses'}"
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise PapersiftError(
            f"cannot listen on {host!r}: {exc.strerror}; set --host or [server] host"
        ) from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as sock:
            # As asyncio's create_server, which uvicorn uses: a port left in TIME_WAIT is free.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise PapersiftError(
                        f"{where} is in use; pick another with --port or [server] port"
                    ) from None
                raise PapersiftError(
                    f"cannot listen on {where}: {exc.strerror}; "
                    "set --host/--port or [server] host/port"
                ) from None


# Allocations (less deallocations) between young-generation collections; Python's default
# is 700.
YOUNG_COLLECTION_AFTER = 10_000


def settle_heap() -> None:
    """Hide what start-up made (modules, templates, the engine and its tables: it lives as
    long as the process) from the garbage collector. Under load a full collection walked
    those ~145k objects at 663k papers every few seconds, 78 ms each with the GIL held,
    which every request in flight waited out (bench/RESULTS.md, issue 23, session 19).

    A hybrid search holds a few thousand objects at once (its candidate lists, the page)
    and frees nearly all of them by reference counting, yet at the default threshold that
    peak set off 1.4 young collections per search, 0.12-0.14 ms of its CPU; at 10,000, one
    per 200 searches (bench/RESULTS.md, issue 23, session 23)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_AFTER, *gc.get_threshold()[1:])


def _warm_up(data: DataDir, config: Config) -> None:
    """Load the query session, summarise the vectors for the semantic rule's z-score
    (``engine.background``: ~0.1 s at 663k papers) and read the word lists of did you mean
    (``engine.word_lists``), before the first search needs them."""
    data.embedder.embed_query("warm-up")
    if max(config.search.semantic_zscore, config.search.semantic_zscore_sorted) > 0:
        data.vectors.background()
    load_word_lists()


def serve(config: Config, *, host: str | None = None, port: int | None = None) -> int:
    """Open (or bootstrap) the data directory and serve until interrupted."""
    host = host or config.server.host
    port = port or config.server.port
    check_address(host, port)
    import uvicorn

    from papersift.server.app import create_app
    from papersift.server.http_protocol import HeadLimitProtocol

    data = DataDir(config, create=True, graph_in_memory=config.server.graph_in_memory)
    report = bootstrap_if_empty(data, config.data.bootstrap, progress=sys.stderr.isatty())
    if report is not None:
        log.info("first start: %s", report.line())
    elif not data.store.count():  # visitors see an empty index; the admin learns why here
        log.warning(
            "the index is empty ([data] bootstrap = %r): add papers with `papersift import "
            "FILE...` (an arXiv snapshot), `papersift harvest` or `papersift add ID...`",
            config.data.bootstrap,
        )
    data.sync_lexical()
    engine = SearchEngine(data)
    data.vectors  # noqa: B018 - load the model and vectors before the first request
    # The query session (engine.embed) loads beside the server's start-up, not in the first
    # request; a request arriving meanwhile waits for it.
    warm_up = threading.Thread(target=_warm_up, args=(data, config), daemon=True)
    warm_up.start()
    from papersift.indexer.scheduler import JobRunner

    # On a terminal the first embedding draws a bar; otherwise it logs its rate and time left.
    runner = JobRunner(engine, config, progress=sys.stderr.isatty())  # checks the crons too
    app = create_app(engine, config)
    app.state.jobs = runner  # the admin page and API read and trigger it
    runner.start()
    runner.trigger("embed")  # the backlog left by an import or an interrupted run
    settle_heap()
    started = False
    try:
        with stop_on_signals():
            uvicorn.run(
                app,
                host=host,
                port=port,
                log_level="info",
                # uvicorn's own lines through the CLI's handler: one stream (stderr) and one
                # format (``TIME LEVEL logger: message``) for every line the server writes, where
                # its default config put access lines on stdout without a time.
                log_config=None,
                proxy_headers=True,
                # httptools (a dependency; ~0.7 ms less CPU per request than h11), with a limit on
                # a request head as h11 had, which httptools lacks, put back: a head over 64 KB is
                # answered 431 (server/http_protocol.py). uvloop (a dependency) runs the event loop.
                http=HeadLimitProtocol,
            )
        started = True
    except Stopped as why:
        started = True
        log.info("stopping (%s): jobs stop at their next checkpoint", why)
    except SystemExit:
        pass  # uvicorn could not start (it logged why) and exits: stop our threads first
    finally:
        # onnxruntime aborts the process ("terminate called") if the interpreter exits while
        # one of its sessions is still running in a thread: wait for them all.
        warm_up.join()
        runner.shutdown()
        app.state.ctx.close()  # no request's engine call outlives the engine
        engine.close()
    if not started:
        raise PapersiftError(f"the server could not start on port {port} (see the error above)")
    return 0
