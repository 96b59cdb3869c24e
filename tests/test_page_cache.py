"""The page cache over real HTTP: repeated search and paper pages are sent as stored, per
content encoding and format, byte for byte what rendering gives, and retired when the data
changes."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from lxml import html
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import import_files
from papersift.server.app import create_app
from papersift.server.page_cache import PageCache
from tests.corpus import make_config, sample_records, write_jsonl

pytest_plugins = ["tests.web_fixtures"]


def _small(tmp_path: Path, **sections: dict[str, int]) -> Config:
    config = make_config(tmp_path, **sections)
    data = DataDir(config)
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", sample_records()[:40])])
    data.close()
    return config


@pytest.fixture
def own(tmp_path: Path) -> Iterator[tuple[TestClient, SearchEngine, Config]]:
    """An app over a data directory of this test's own (the test changes it)."""
    config = _small(tmp_path)
    engine = open_engine(config)
    with TestClient(create_app(engine, config), follow_redirects=False) as c:
        yield c, engine, config
    engine.close()


def _cache(client: TestClient) -> PageCache:
    cache: PageCache = client.app.state.page_cache  # type: ignore[attr-defined]
    return cache


@pytest.mark.slow
def test_repeated_pages_come_from_the_cache(own: tuple[TestClient, SearchEngine, Config]) -> None:
    client, _, _ = own
    client.get("/search?q=warm")  # loads the vectors: a generation change, nothing kept
    cache = _cache(client)
    assert cache.size == 0
    plain = client.get("/search?q=language", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and cache.misses == 2 and cache.hits == 0
    again = client.get("/search?q=language", headers={"Accept-Encoding": "identity"})
    assert cache.hits == 1 and again.content == plain.content
    assert again.headers["etag"] == plain.headers["etag"]
    assert again.headers["content-type"] == plain.headers["content-type"]
    assert html.fromstring(again.content).xpath("//title")
    # Compressed once per encoding; the bytes decode to the same page.
    for name in ("gzip", "br"):
        for _ in range(2):
            r = client.get("/search?q=language", headers={"Accept-Encoding": name})
            assert r.headers["content-encoding"] == name and "Accept-Encoding" in r.headers["vary"]
            assert r.content == plain.content  # decoded by the client
    assert cache.hits == 3 and cache.misses == 4
    # Conditional request: 304 with the same validator, no body.
    r = client.get("/search?q=language", headers={"If-None-Match": plain.headers["etag"]})
    assert r.status_code == 304 and r.content == b"" and r.headers["etag"] == plain.headers["etag"]


def test_keys_keep_pages_apart(own: tuple[TestClient, SearchEngine, Config]) -> None:
    client, _, _ = own
    a = client.get("/search?q=language").text
    b = client.get("/search?q=parsing").text
    assert a != b
    md = client.get("/search?q=language", headers={"Accept": "text/markdown"})
    assert md.headers["content-type"].startswith("text/markdown")
    other_host = client.get("/search?q=language", headers={"Host": "other.example"})
    assert "other.example" in other_host.text and "other.example" not in a
    bad = client.get("/search?page=0")
    assert bad.status_code == 400 and client.get("/search?page=0").status_code == 400


@pytest.mark.slow
def test_a_data_change_retires_pages(
    own: tuple[TestClient, SearchEngine, Config], tmp_path: Path
) -> None:
    client, engine, _ = own
    cache = _cache(client)
    client.get("/search")
    before = client.get("/search").text
    assert cache.hits == 1
    extra = sample_records()[40:60]
    import_files(engine.data, [write_jsonl(tmp_path / "b.jsonl", extra)])
    misses = cache.misses
    after = client.get("/search").text
    assert after != before and cache.misses == misses + 1 and cache.hits == 1


def test_paper_page_and_its_redirect(client: TestClient, engine: SearchEngine) -> None:
    """The session app: a non-canonical paper URL still redirects (never cached), the
    canonical page is sent twice the same."""
    paper = engine.search(SearchRequest(sort="newest")).hits[0].paper
    r = client.get(f"/papers/{paper.arxiv_id}")
    assert r.status_code == 301
    page = client.get(r.headers["location"])
    again = client.get(r.headers["location"])
    assert page.status_code == again.status_code == 200 and page.content == again.content
    assert client.get(f"/papers/{paper.arxiv_id}").status_code == 301


@pytest.mark.slow
def test_off_with_the_result_cache(tmp_path: Path) -> None:
    engine = open_engine(_small(tmp_path, search={"cache_size": 0}))
    try:
        with TestClient(create_app(engine, engine.config)) as c:
            assert c.get("/search").status_code == 200 and c.get("/search").status_code == 200
            assert _cache(c).hits == _cache(c).misses == 0
    finally:
        engine.close()


def test_over_a_real_socket(http: httpx.Client) -> None:
    """Through uvicorn: the stored gzip bytes are a valid gzip stream of the page."""
    first = http.get("/search?q=parsing", headers={"Accept-Encoding": "gzip"})
    with http.stream("GET", "/search?q=parsing", headers={"Accept-Encoding": "gzip"}) as r:
        raw = b"".join(r.iter_raw())
        assert r.headers["content-encoding"] == "gzip"
        assert int(r.headers["content-length"]) == len(raw)
    assert gzip.decompress(raw) == first.content
