"""Running the one server process: first-start import, background embedding, uvicorn."""

from __future__ import annotations

import logging
import sys
import threading

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine
from papersift.indexer.build import bootstrap_if_empty

log = logging.getLogger(__name__)


def serve(config: Config, *, host: str | None = None, port: int | None = None) -> int:
    """Open (or bootstrap) the data directory and serve until interrupted."""
    import uvicorn

    from papersift.server.app import create_app

    data = DataDir(config, create=True)
    report = bootstrap_if_empty(data, config.data.bootstrap, progress=sys.stderr.isatty())
    if report is not None:
        log.info("first start: %s", report.line())
    data.sync_lexical()
    engine = SearchEngine(data)
    data.vectors  # noqa: B018 - load the model and vectors before the first request
    # The query session (engine.embed) loads beside the server's start-up, not in the first
    # request; a request arriving meanwhile waits for it.
    threading.Thread(target=data.embedder.embed_query, args=("warm-up",), daemon=True).start()
    from papersift.indexer.scheduler import JobRunner

    # On a terminal the first embedding draws a bar; otherwise it logs its rate and time left.
    runner = JobRunner(engine, config, progress=sys.stderr.isatty())  # checks the crons too
    app = create_app(engine, config)
    app.state.jobs = runner  # the admin page and API read and trigger it
    runner.start()
    runner.trigger("embed")  # the backlog left by an import or an interrupted run
    try:
        uvicorn.run(
            app,
            host=host or config.server.host,
            port=port or config.server.port,
            log_level="info",
            proxy_headers=True,
            # h11 even where httptools is installed: h11 refuses a request head over 16 KB,
            # httptools buffers any size. uvloop (a dependency) runs the event loop.
            http="h11",
        )
    finally:
        runner.shutdown()
        engine.close()
    return 0
