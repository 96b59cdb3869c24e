"""No request is unbounded (issue 24): integers are bounded before ``int()`` on every route,
and a paper page's version links stay few whatever the stored version."""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.urls import VERSION_LINKS
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import import_files
from papersift.server.app import create_app
from papersift.server.paging import NamePage
from tests.corpus import demo_records, make_config, write_jsonl
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

NINES = "9" * 5000  # int() refuses more than 4,300 digits

QUERY_ROUTES = [
    f"/api/v1/researchers?page={NINES}",
    f"/api/v1/researchers?limit={NINES}",
    f"/researchers?page={NINES}",
    f"/api/v1/institutions?page={NINES}",
    f"/api/v1/institutions?limit={NINES}",
    f"/institutions?page={NINES}",
    f"/search?q=x&page={NINES}",
    f"/api/v1/search?q=x&page_size={NINES}",
    "/api/v1/researchers?page=%D9%A3",  # an Arabic-Indic digit: no ASCII number
]
VERSION_ROUTES = [
    f"/papers/2401.10241v{NINES}",
    f"/abs/2401.10241v{NINES}",
    f"/api/v1/papers/2401.10241v{NINES}",
    "/papers/2401.10241v99999999999999999999",
    "/api/v1/papers/2401.10241v0",
]


@pytest.mark.parametrize("url", QUERY_ROUTES + VERSION_ROUTES)
def test_huge_numbers_are_a_400(client: TestClient, url: str) -> None:
    r = client.get(url)
    assert r.status_code == 400, (url[:80], r.status_code)


def test_similar_limit_is_bounded(client: TestClient) -> None:
    first = client.get("/api/v1/search?q=search&mode=keyword").json()["hits"][0]["paper"]["id"]
    assert client.get(f"/api/v1/papers/{first}/similar?limit=3").status_code == 200
    assert client.get(f"/api/v1/papers/{first}/similar?limit={NINES}").status_code == 400


def test_sitemap_chunk_number_is_bounded(client: TestClient) -> None:
    assert client.get(f"/sitemaps/papers-{NINES}.xml").status_code == 404
    assert client.get("/sitemaps/papers-1.xml").status_code == 200


@pytest.fixture(scope="module")
def versions_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    root = tmp_path_factory.mktemp("versions")
    config = make_config(root)
    records = demo_records()[:3]
    records[0]["versions"] = [{"version": "v1000", "created": "Mon, 1 Jan 2024 10:00:00 GMT"},
                              *records[0]["versions"]]  # fmt: skip
    data = DataDir(config, create=True)
    import_files(data, [write_jsonl(root / "v.jsonl", records)])
    data.close()
    # A store written before ingest bounded versions (the import accepted v9223372036854775807).
    with sqlite3.connect(root / "data" / "papers.sqlite") as db:
        db.execute("UPDATE papers SET version = ? WHERE arxiv_id = ?",
                   (2**63 - 1, records[1]["id"]))  # fmt: skip
    engine = open_engine(config)
    with TestClient(create_app(engine, config), follow_redirects=True) as c:
        yield c, root
    engine.close()


def _version_links(html: str) -> list[str]:
    doc = parse_html(html)
    (dd,) = doc.xpath("//dt[text()='Versions']/following-sibling::dd[1]")
    return [str(a.text_content()) for a in dd.xpath(".//a")]


@pytest.mark.slow
def test_paper_page_caps_version_links(versions_client: tuple[TestClient, Path]) -> None:
    client, _ = versions_client
    records = demo_records()[:3]
    page = client.get(f"/papers/{records[0]['id']}")
    assert page.status_code == 200
    links = _version_links(page.text)
    assert len(links) == VERSION_LINKS + 1
    assert links[0] == "v1" and links[1] == "… all 1,000 versions" and links[-1] == "v1000"
    start = time.perf_counter()
    huge = client.get(f"/papers/{records[1]['id']}")
    took = time.perf_counter() - start
    assert huge.status_code == 200 and len(huge.content) < 200_000 and took < 5
    assert _version_links(huge.text)[1] == f"… all {2**63 - 1:,} versions"
    few = _version_links(client.get(f"/papers/{records[2]['id']}").text)
    assert few == [f"v{v}" for v in range(1, len(few) + 1)]


@pytest.mark.parametrize("q", ["wang#j", "an & b", "li?x=1&page=9", "é/ü+"])
def test_page_link_encodes_the_query(q: str) -> None:
    link = NamePage("/api/v1/researchers", q, 1, 5, api=True).link(2)
    parts = urlsplit(link)
    assert not parts.fragment and parse_qs(parts.query) == {"q": [q], "page": ["2"], "limit": ["5"]}
    assert NamePage("/researchers", "", 2, 50).link(1) == "/researchers"


def test_next_links_round_trip_the_query(client: TestClient) -> None:
    seen = 0
    for path in ("/api/v1/researchers", "/api/v1/institutions"):
        for q in ("wang#j", "an & b", "wang", "li"):
            r = client.get(path, params={"q": q, "limit": 1})
            if r.status_code == 404:  # no institution registry in this index
                continue
            body = r.json()
            nxt = body.get("next")
            assert (nxt is not None) == (body["total"] > 1), (path, q)
            if nxt:
                seen += 1
                parts = urlsplit(nxt)
                assert not parts.fragment and parse_qs(parts.query)["q"] == [q], nxt
                assert client.get(nxt).json()["page"] == 2
    assert seen  # the check ran on real next links


def test_researchers_page_next_link_is_encoded(client: TestClient) -> None:
    page = parse_html(client.get("/researchers", params={"q": "an & b"}).text)
    for href in page.xpath("//a[@rel='next']/@href | //a[contains(., 'Next')]/@href"):
        assert parse_qs(urlsplit(href).query).get("q") == ["an & b"]


def test_feed_links_never_carry_a_hostile_host(client: TestClient) -> None:
    r = client.get("/rss/latest.xml", headers={"host": 'evil.example"><script>x</script>'})
    assert r.status_code == 200 and b"evil.example" not in r.content
    assert b"<link>http://127.0.0.1:8000/" in r.content  # the address serve listens on
    assert r.headers["cache-control"].startswith("private, ")  # built from a Host header


def test_a_configured_base_url_is_cached_publicly(
    engine: SearchEngine, built_config: Config
) -> None:
    server = dataclasses.replace(built_config.server, base_url="https://papers.example")
    app = create_app(engine, dataclasses.replace(built_config, server=server))
    with TestClient(app, base_url="http://testserver") as c:
        r = c.get("/rss/latest.xml", headers={"host": "evil.example"})
        assert r.headers["cache-control"].startswith("public, ")
        assert b"evil.example" not in r.content and b"https://papers.example/papers/" in r.content
        assert c.get("/sitemap.xml").headers["cache-control"].startswith("public, ")
