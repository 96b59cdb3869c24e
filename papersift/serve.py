"""Running the one server process: first-start import, background embedding, uvicorn."""

from __future__ import annotations

import logging
import sys
import threading

from engine.datadir import DataDir
from engine.search import SearchEngine
from indexer.build import bootstrap_if_empty, embed_backlog
from papersift.config import Config

log = logging.getLogger(__name__)


def _embed_in_background(data: DataDir, stop: threading.Event) -> threading.Thread:
    def run() -> None:
        try:
            done = embed_backlog(data, progress=sys.stderr.isatty(), stop=stop)
            if done:
                log.info("embedding backlog done: %d papers embedded", done)
        except Exception:  # logged, never silently swallowed; serving goes on keyword-only
            log.exception("embedding backlog failed")

    thread = threading.Thread(target=run, name="embed-backlog", daemon=True)
    thread.start()
    return thread


def serve(config: Config, *, host: str | None = None, port: int | None = None) -> int:
    """Open (or bootstrap) the data directory and serve until interrupted."""
    import uvicorn

    from server.app import create_app

    data = DataDir(config, create=True)
    report = bootstrap_if_empty(data, config.data.bootstrap, progress=sys.stderr.isatty())
    if report is not None:
        log.info("first start: %s", report.line())
    data.sync_lexical()
    engine = SearchEngine(data)
    data.vectors  # noqa: B018 - load the model and vectors before the first request
    stop = threading.Event()
    worker = _embed_in_background(data, stop)
    app = create_app(engine, config)
    try:
        uvicorn.run(
            app,
            host=host or config.server.host,
            port=port or config.server.port,
            log_level="info",
            proxy_headers=True,
        )
    finally:
        stop.set()
        worker.join(timeout=30)
        engine.close()
    return 0
