"""Fixtures for the web tests: the app over the session's real index (``engine`` from
conftest), an in-process ASGI client, and a real uvicorn server on a free loopback port.

Test modules load these with ``pytest_plugins = ["tests.web_fixtures"]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.web_helpers import NARROW_WINDOW, serving


@pytest.fixture(scope="session")
def web_app(engine: SearchEngine, built_config: Config) -> Starlette:
    return create_app(engine, built_config)


@pytest.fixture(scope="session")
def client(web_app: Starlette) -> Iterator[TestClient]:
    """In-process client; a server exception fails the test instead of becoming a 500."""
    with TestClient(web_app, base_url="http://testserver", follow_redirects=False) as c:
        yield c


@pytest.fixture(scope="module")
def narrow(engine: SearchEngine, built_config: Config) -> Iterator[TestClient]:
    """The app over the session index with a result window of ``NARROW_WINDOW`` results."""
    search = replace(built_config.search, max_window=NARROW_WINDOW)
    with TestClient(create_app(engine, replace(built_config, search=search)),
                    follow_redirects=False) as c:  # fmt: skip
        yield c


@pytest.fixture(scope="session")
def live_url(web_app: Starlette) -> Iterator[str]:
    """Base URL of a real uvicorn server over the session's app."""
    with serving(web_app) as url:
        yield url


@pytest.fixture(scope="session")
def http(live_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_url, follow_redirects=False, timeout=30) as c:
        yield c
