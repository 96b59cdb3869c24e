"""The server's templates: all compiled when the app is made, and never read from disk again,
so a running server keeps the templates it started with (the real app, via TestClient)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from jinja2.exceptions import UndefinedError
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.search import SearchEngine
from papersift.server import app as app_module
from papersift.server.app import create_app
from papersift.server.templating import TEMPLATE_DIR, make_environment


def test_every_template_is_compiled_when_the_app_is_made(
    engine: SearchEngine, built_config: Config
) -> None:
    env = create_app(engine, built_config).state.templates
    assert env.auto_reload is False
    assert env.list_templates() == sorted(p.name for p in TEMPLATE_DIR.glob("*.html"))
    assert {name for _, name in env.cache} == set(env.list_templates())


def test_a_running_server_keeps_the_templates_it_started_with(
    engine: SearchEngine, built_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """During an in-place update, /search rendered the new search.html against the old
    modules: a 500, "'as_typed_url' is undefined"."""
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATE_DIR, templates)
    monkeypatch.setattr(app_module, "make_environment", lambda: make_environment(templates))
    with TestClient(create_app(engine, built_config)) as client:
        before = client.get("/search", params={"q": "parsing", "mode": "keyword"})
        assert before.status_code == 200 and "results" in before.text
        # The update: search.html now shows a value this code does not pass.
        page = templates / "search.html"
        page.write_text("{{ new_in_the_update }}\n" + page.read_text("utf-8"), "utf-8")
        # Another query: the page cache holds the first as sent.
        after = client.get("/search", params={"q": "language", "mode": "keyword"})
        assert after.status_code == 200, after.text
        assert "results" in after.text and "language" in after.text
    # What a server that read templates again would have rendered:
    with pytest.raises(UndefinedError, match="'new_in_the_update' is undefined"):
        make_environment(templates).get_template("search.html").render()
