"""Fixtures for the accounts and library tests (``pytest_plugins = ["tests.member_fixtures"]``):
the real app over the session's index with a members file of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.member_kit import member_config


@pytest.fixture
def members_root(tmp_path: Path) -> Path:
    return tmp_path / "members"


@pytest.fixture
def site(engine: SearchEngine, built_config: Config, members_root: Path) -> Iterator[TestClient]:
    app = create_app(engine, member_config(built_config, members_root))
    with TestClient(app, base_url="http://testserver", follow_redirects=False) as c:
        yield c
