"""Public pages tell a visitor what there is; the commands and settings that fill an empty
part (``papersift enrich``, ``[lab] members``) show to the admin only: a request with the
admin token, as a browser sends it on every page once signed in at /admin. The admin's view
is never kept for anyone else, by the page cache or a shared cache."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import replace

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.urls import researcher_url
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.test_lab import lab_config
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

TOKEN = "s3cret-admin-token-2"
ADMIN = {"Authorization": "Basic " + base64.b64encode(f"admin:{TOKEN}".encode()).decode()}
BEARER = {"Authorization": f"Bearer {TOKEN}"}
WRONG = {"Authorization": "Basic " + base64.b64encode(b"admin:guess").decode()}
# An instruction for whoever runs the server: a command, or a config.toml key.
INSTRUCTION = re.compile(r"papersift (?:[a-z-]+)|\[(?:lab|mail|data|harvest)\] ")


def _text(client: TestClient, url: str, headers: dict[str, str] | None = None) -> str:
    r = client.get(url, headers=headers or {})
    assert r.status_code == 200, url
    main = parse_html(r.text).cssselect("main")[0]
    return " ".join(main.text_content().split())


@pytest.fixture(scope="module")
def site(
    engine: SearchEngine, built_config: Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """The session index with an admin token and a lab declared by name only, as a lab
    starts (no members listed, so no recommendations yet)."""
    declared = lab_config(
        tmp_path_factory.mktemp("lab"),
        '[lab]\nname = "Algebraic Geometry Lab"\n',
        server={"admin_token": TOKEN},
    )
    config = replace(built_config, lab=declared.lab, server=declared.server)
    with TestClient(create_app(engine, config), follow_redirects=False) as c:
        yield c


def _researcher(engine: SearchEngine) -> str:
    top, _ = engine.people.search("", limit=1)
    return researcher_url(top[0].rid, top[0].name)


PAGES = {  # page -> what the admin is told there
    "/": "[lab] members",
    "/institutions": "papersift import-ror FILE",
    "/search?q=2501.99999": "papersift add 2501.99999",  # an id not in the index
    "/search?q=retrieval&sort=cited": "papersift enrich",  # no citation counts here
    "/signin": "papersift user add",  # no account yet
}


@pytest.mark.parametrize("url", [*PAGES, "researcher"])
def test_a_visitor_reads_no_instructions(site: TestClient, engine: SearchEngine, url: str) -> None:
    url = _researcher(engine) if url == "researcher" else url
    for headers in (None, WRONG):
        text = _text(site, url, headers)
        assert INSTRUCTION.findall(text) == [], url
    if url == "/":
        assert "Recommendations for the lab show here once papers by its members" in text


@pytest.mark.parametrize("url", [*PAGES, "researcher"])
def test_the_admin_reads_the_instructions(site: TestClient, engine: SearchEngine, url: str) -> None:
    told = PAGES.get(url, "papersift enrich")
    url = _researcher(engine) if url == "researcher" else url
    for headers in (ADMIN, BEARER):
        r = site.get(url, headers=headers)
        assert r.headers["cache-control"] == "private, no-store", url
        assert told in _text(site, url, headers), url


def test_the_admins_page_is_not_served_to_visitors(site: TestClient) -> None:
    """The search page is kept by the page cache: the admin's view neither comes from it nor
    goes into it."""
    url = "/search?q=2501.99998"
    first = site.get(url)
    assert "public" in first.headers["cache-control"]
    assert "Authorization" in first.headers["vary"]  # a browser's kept copy is a visitor's
    assert "papersift add" in _text(site, url, ADMIN)
    assert "papersift add" not in _text(site, url)
    assert site.get(url, headers={"If-None-Match": first.headers["etag"]}).status_code == 304


def test_an_empty_index_says_so_and_the_admin_how_to_fill_it(fresh_config: Config) -> None:
    config = replace(fresh_config, server=replace(fresh_config.server, admin_token=TOKEN))
    engine = SearchEngine(DataDir(config))  # a new, empty data directory
    try:
        with TestClient(create_app(engine, config)) as c:
            for url in ("/", "/search?q=anything", "/researchers"):
                visitor = _text(c, url)
                assert "no papers have been imported yet" in visitor or "No researchers" in visitor
                assert INSTRUCTION.findall(visitor) == [], url
                assert "papersift import FILE" in _text(c, url, ADMIN), url
    finally:
        engine.close()


def test_no_admin_token_no_admin_view(built_config: Config, engine: SearchEngine) -> None:
    """Without a token configured nobody is the admin, whatever the request carries."""
    assert not built_config.server.admin_token
    with TestClient(create_app(engine, built_config)) as c:
        empty = base64.b64encode(b"admin:").decode()
        for headers in ({"Authorization": f"Basic {empty}"}, {"Authorization": "Bearer "}):
            assert "papersift" not in _text(c, "/institutions", headers)
