"""The researcher and institution lists page to their end by following their own ``next``
links, for queries that only survive a link when encoded (``an & b`` gave a 400 on page 2,
``a#b`` looped on page 1): over HTTP, the JSON API and the HTML pages, against the full list
the store returns in one go."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.institutions import Institutions
from papersift.engine.people import People
from papersift.engine.ror import read_ror
from papersift.engine.search import SearchEngine
from papersift.server import institution_pages, people_pages
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

# Each word of a name query starts a word of the name (engine.people_names): "an & m", as
# "an & b" no longer does, matches several researchers of the test corpus.
QUERIES = ["an & m", "a#b", "x+y", "é"]
ROR = Path(__file__).parent / "fixtures" / "ror" / "ror_subset_v2.jsonl.gz"
_ID = re.compile(r"^/(?:researchers|institutions)/(\d+)(?:-|$)")


@pytest.fixture(scope="module")
def registry_config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return make_config(tmp_path_factory.mktemp("names"))


@pytest.fixture(scope="module")
def registry_client(registry_config: Config) -> Iterator[TestClient]:
    """An app over an index holding the recorded ROR subset (528 institutions)."""
    engine = SearchEngine(DataDir(registry_config))
    assert engine.institutions.import_organisations(read_ror(ROR)) == 528
    with TestClient(create_app(engine, registry_config), follow_redirects=False) as c:
        yield c
    engine.close()


def _researchers(engine: SearchEngine, q: str) -> list[int]:
    found, total = People(engine.data.store).search(q, 10**6)
    assert len(found) == total
    return [r.rid for r in found]


def _institutions(config: Config, q: str) -> list[int]:
    data = DataDir(config)
    try:
        found, total = Institutions(data.store).search(q, 10**6)
    finally:
        data.close()
    assert len(found) == total
    return [i.iid for i in found]


def _size(expected: list[int]) -> int:
    """A page size that takes three or four pages to the end (at least two items match)."""
    assert len(expected) >= 2, "the query must match several names for paging to be tested"
    return min(100, -(-len(expected) // 3))


def _follow_api(client: TestClient, path: str, key: str, q: str, limit: int) -> list[int]:
    r = client.get(path, params={"q": q, "limit": limit})
    ids: list[int] = []
    pages = 0
    while True:
        assert r.status_code == 200, (r.url, r.text[:300])
        body = r.json()
        pages += 1
        assert body["q"] == q and body["page"] == pages
        ids += [item["id"] for item in body[key]]
        if body["next"] is None:
            return ids
        assert not urlsplit(body["next"]).fragment
        assert parse_qs(urlsplit(body["next"]).query)["q"] == [q]
        assert pages < 20, "next links do not reach the end"
        r = client.get(body["next"])


def _follow_pages(client: TestClient, path: str, css: str, q: str) -> list[int]:
    r = client.get(path, params={"q": q})
    ids: list[int] = []
    pages = 0
    previous: str | None = None
    while True:
        assert r.status_code == 200, (r.url, r.text[:300])
        doc = parse_html(r.text)
        pages += 1
        box = "#q-researchers" if path == "/researchers" else "#q-institutions"
        assert doc.cssselect(box)[0].get("value") == q  # the page's own name search
        prev = doc.xpath("//a[@rel='prev']/@href")
        assert prev == ([previous] if previous else [])  # back to the page we came from
        for href in doc.cssselect(f"{css} a"):
            m = _ID.match(href.get("href"))
            assert m, href.get("href")
            ids.append(int(m.group(1)))
        nxt = doc.xpath("//a[@rel='next']/@href")
        if not nxt:
            return ids
        assert pages < 20, "next links do not reach the end"
        previous = str(r.url).removeprefix("http://testserver")
        r = client.get(nxt[0])


@pytest.mark.parametrize("q", QUERIES)
def test_researchers_api_pages_to_the_end(client: TestClient, engine: SearchEngine, q: str) -> None:
    expected = _researchers(engine, q)
    got = _follow_api(client, "/api/v1/researchers", "researchers", q, _size(expected))
    assert got == expected


@pytest.mark.parametrize("q", QUERIES)
def test_researcher_pages_page_to_the_end(
    client: TestClient, engine: SearchEngine, q: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _researchers(engine, q)
    monkeypatch.setattr(people_pages, "INDEX_PAGE", _size(expected))
    assert _follow_pages(client, "/researchers", "ol.researchers", q) == expected


@pytest.mark.parametrize("q", QUERIES)
def test_institutions_api_pages_to_the_end(
    registry_client: TestClient, registry_config: Config, q: str
) -> None:
    expected = _institutions(registry_config, q)
    limit = _size(expected)
    got = _follow_api(registry_client, "/api/v1/institutions", "institutions", q, limit)
    assert got == expected


@pytest.mark.parametrize("q", QUERIES)
def test_institution_pages_page_to_the_end(
    registry_client: TestClient, registry_config: Config, q: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _institutions(registry_config, q)
    monkeypatch.setattr(institution_pages, "INDEX_PAGE", _size(expected))
    assert _follow_pages(registry_client, "/institutions", "ol.institutions", q) == expected


def test_the_default_page_sizes_page_too(client: TestClient, engine: SearchEngine) -> None:
    """Unpatched: the researcher pages' own size (50) and the API's default (20)."""
    expected = _researchers(engine, "s")
    assert len(expected) > 50  # more than one page of each
    assert _follow_pages(client, "/researchers", "ol.researchers", "s") == expected
    r = client.get("/api/v1/researchers", params={"q": "s"})
    body = r.json()
    assert len(body["researchers"]) == 20
    assert parse_qs(urlsplit(body["next"]).query) == {"q": ["s"], "page": ["2"], "limit": ["20"]}
