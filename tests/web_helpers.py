"""Helpers for the web tests: pages are parsed, never string-matched; a real server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import lxml.html
import uvicorn
from starlette.applications import Starlette

from papersift.server.http_protocol import HeadLimitProtocol

# The result window of the ``narrow`` app (tests.web_fixtures): smaller than the session index.
NARROW_WINDOW = 100


def parse_html(text: str) -> Any:
    """The document as an lxml tree (query it with cssselect or XPath)."""
    return lxml.html.document_fromstring(text)


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """``app`` in a real uvicorn server (real sockets, real HTTP parsing) on 127.0.0.1;
    yields its base URL."""
    sock = _free_socket()
    port = sock.getsockname()[1]
    # The parser the server runs (papersift/serve.py), with its limit on a request head.
    config = uvicorn.Config(app, log_level="warning", lifespan="off", http=HeadLimitProtocol)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
