"""Fixtures for the web tests: the app over the session's real index (``engine`` from
conftest), an in-process ASGI client, and a real uvicorn server on a free loopback port.

Test modules load these with ``pytest_plugins = ["tests.web_fixtures"]``.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.testclient import TestClient

from engine.search import SearchEngine
from papersift.config import Config
from server.app import create_app


@pytest.fixture(scope="session")
def web_app(engine: SearchEngine, built_config: Config) -> Starlette:
    return create_app(engine, built_config)


@pytest.fixture(scope="session")
def client(web_app: Starlette) -> Iterator[TestClient]:
    """In-process client; a server exception fails the test instead of becoming a 500."""
    with TestClient(web_app, base_url="http://testserver", follow_redirects=False) as c:
        yield c


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """A real uvicorn server for ``app`` on a free loopback port; yields its base URL."""
    sock = _free_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
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


@pytest.fixture(scope="session")
def live_url(web_app: Starlette) -> Iterator[str]:
    """Base URL of a real uvicorn server (real sockets, real HTTP parsing) on 127.0.0.1."""
    with serving(web_app) as url:
        yield url


@pytest.fixture(scope="session")
def http(live_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_url, follow_redirects=False, timeout=30) as c:
        yield c
