"""Sitemaps, robots.txt: parsed with lxml and checked against the sitemaps.org rules."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from lxml import etree
from starlette.testclient import TestClient

from papersift.core.authors import parse_authors
from papersift.core.config import Config
from papersift.core.config_load import load_config
from papersift.core.errors import ConfigError
from papersift.core.paper import Paper
from papersift.core.urls import institution_url, paper_path, researcher_url
from papersift.engine.datadir import DataDir
from papersift.engine.enrichment import AFFILIATIONS_KEY
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.ror import Organisation, read_ror
from papersift.engine.search import SearchEngine
from papersift.feeds.sitemap import CONTENT_TYPE, MAX_URLS, SitemapOverflow, sitemap_index, urlset
from papersift.indexer.identity_refresh import refresh_people
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.test_institution_pages import ROR

pytest_plugins = ["tests.web_fixtures"]

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SM = {"sm": NS}
CHUNK = 100
W3C_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_sitemap_file(body: bytes, root_tag: str, limit: int = MAX_URLS) -> list[str]:
    """The rules every sitemap file must follow; returns its locs."""
    assert body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>')
    assert len(body) <= 50 * 1024 * 1024
    root = etree.fromstring(body)
    assert root.tag == f"{{{NS}}}{root_tag}"
    child = "url" if root_tag == "urlset" else "sitemap"
    items = root.findall(f"sm:{child}", SM)
    assert len(items) <= limit
    locs = []
    for item in items:
        assert [c.tag.split("}")[1] for c in item][:1] == ["loc"]
        loc = item.findtext("sm:loc", namespaces=SM)
        assert loc and loc.startswith("http://testserver/") and len(loc) < 2048
        assert " " not in loc
        lastmod = item.findtext("sm:lastmod", namespaces=SM)
        if lastmod is not None:
            assert W3C_DATE.match(lastmod) and date.fromisoformat(lastmod) <= date.today()
        locs.append(loc)
    return locs


def test_urlset_streams_and_escapes() -> None:
    rows = [("/papers/a&b <c>", date(2024, 1, 2)), ("/categories/cs.CL", None)]
    pieces = list(urlset("http://testserver", iter(rows)))
    assert len(pieces) == 3  # head, one piece of rows, tail
    locs = check_sitemap_file(b"".join(pieces), "urlset")
    assert locs == ["http://testserver/papers/a&b%20%3Cc%3E", "http://testserver/categories/cs.CL"]
    with pytest.raises(SitemapOverflow):
        list(urlset("http://testserver", [("/x", None)] * 3, limit=2))
    index = sitemap_index("http://testserver", [("/sitemaps/papers-1.xml", date(2024, 5, 6))])
    assert check_sitemap_file(index, "sitemapindex") == ["http://testserver/sitemaps/papers-1.xml"]


@pytest.fixture(scope="module")
def small_chunks(engine: SearchEngine, built_config: Config) -> Iterator[TestClient]:
    """The app with sitemap chunks of 100 URLs, so the ~320 papers need several."""
    config = replace(built_config, feeds=replace(built_config.feeds, sitemap_urls=CHUNK))
    with TestClient(create_app(engine, config), follow_redirects=False) as c:
        yield c


def all_paper_paths(engine: SearchEngine) -> set[str]:
    store = engine.data.store
    papers = store.get([d for d in range(1, store.count() + 10)])
    return {paper_path(p) for p in papers.values()}


def test_sitemap_lists_every_page(small_chunks: TestClient, engine: SearchEngine) -> None:
    r = small_chunks.get("/sitemap.xml")
    assert r.status_code == 200 and r.headers["content-type"] == "application/xml; charset=utf-8"
    chunks = check_sitemap_file(r.content, "sitemapindex")
    assert chunks[0] == "http://testserver/sitemaps/pages-1.xml"
    papers = [c for c in chunks if "/papers-" in c]
    assert len(papers) == -(-engine.data.store.count() // CHUNK) > 1
    listed: list[str] = []
    for url in chunks:
        chunk = small_chunks.get(url.removeprefix("http://testserver"))
        assert chunk.status_code == 200
        listed += check_sitemap_file(chunk.content, "urlset", CHUNK)
    assert len(listed) == len(set(listed))
    paths = {u.removeprefix("http://testserver") for u in listed}
    assert {p for p in paths if p.startswith("/papers/")} == all_paper_paths(engine)
    assert (
        "/papers/cmp-lg/9405001-similarity-based-estimation-of-word-cooccurrence-probabilities"
        in paths
    )
    cats = {c.value for c in engine.stats().categories}
    assert {f"/categories/{c}" for c in cats} | {"/", "/categories", "/categories/cs"} <= paths


def test_sitemap_urls_resolve(small_chunks: TestClient) -> None:
    body = small_chunks.get("/sitemaps/papers-2.xml").content
    for loc in check_sitemap_file(body, "urlset")[:5]:
        assert small_chunks.get(loc.removeprefix("http://testserver")).status_code == 200
    for loc in check_sitemap_file(small_chunks.get("/sitemaps/pages-1.xml").content, "urlset"):
        assert small_chunks.get(loc.removeprefix("http://testserver")).status_code == 200, loc


def test_lastmod_is_the_newest_update(small_chunks: TestClient, engine: SearchEngine) -> None:
    root = etree.fromstring(small_chunks.get("/sitemaps/papers-1.xml").content)
    ids = [d for d in range(1, CHUNK + 1)]
    papers = engine.data.store.get(ids)
    expected = {paper_path(p): p.updated.isoformat() for p in papers.values()}
    got = {
        u.findtext("sm:loc", namespaces=SM).removeprefix("http://testserver"): u.findtext(
            "sm:lastmod", namespaces=SM
        )
        for u in root.findall("sm:url", SM)
    }
    assert got == expected
    index = etree.fromstring(small_chunks.get("/sitemap.xml").content)
    first = index.xpath("sm:sitemap[contains(sm:loc, 'papers-1')]/sm:lastmod/text()", namespaces=SM)
    assert first == [max(expected.values())]


def test_sitemap_errors_and_conditional_get(small_chunks: TestClient) -> None:
    for bad in ("/sitemaps/papers-0.xml", "/sitemaps/papers-99.xml", "/sitemaps/nope-1.xml",
                "/sitemaps/papers-x.xml", "/sitemaps/papers-01.xml"):  # fmt: skip
        assert small_chunks.get(bad).status_code == 404, bad
    for url in ("/sitemap.xml", "/sitemaps/papers-1.xml"):
        r = small_chunks.get(url)
        assert r.headers["cache-control"].startswith("private, max-age=")  # base_url empty
        again = small_chunks.get(url, headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304 and again.content == b""


def test_default_chunks_hold_everything(client: TestClient) -> None:
    chunks = check_sitemap_file(client.get("/sitemap.xml").content, "sitemapindex")
    names = ["pages-1.xml", "papers-1.xml", "researchers-1.xml"]  # no institutions imported
    assert [c.rsplit("/", 1)[1] for c in chunks] == names


def test_robots_points_at_the_sitemap(client: TestClient) -> None:
    text = client.get("/robots.txt").text
    assert "Sitemap: http://testserver/sitemap.xml" in text.splitlines()


def test_robots_and_llms_txt_agree_on_the_api(client: TestClient) -> None:
    """Crawlers stay out of the API's endless search URLs; llms.txt, which sends agents
    there, says it is for programs acting for a person, not for crawling, and why."""
    lines = client.get("/robots.txt").text.splitlines()
    rules = [line for line in lines if ":" in line and not line.startswith("#")]
    assert rules[:3] == ["User-agent: *", "Disallow: /api/", "Allow: /"]
    guide = " ".join(client.get("/llms.txt").text.split())
    assert "The API is for programs acting for a person" in guide
    assert "not for crawling: robots.txt keeps crawlers out of `/api/`" in guide


def test_chunk_size_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[feeds]\nsitemap_urls = 50001\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[feeds\] sitemap_urls must be <= 50000"):
        load_config(path, env={})


def listed_urls(client: TestClient, kind: str) -> list[tuple[str, str | None]]:
    """(path, lastmod) of every URL in the ``kind`` chunks of the index, in order."""
    index = check_sitemap_file(client.get("/sitemap.xml").content, "sitemapindex")
    out: list[tuple[str, str | None]] = []
    for url in [u for u in index if f"/{kind}-" in u]:
        r = client.get(url.removeprefix("http://testserver"))
        assert r.status_code == 200 and r.headers["content-type"] == CONTENT_TYPE
        check_sitemap_file(r.content, "urlset", CHUNK)
        for u in etree.fromstring(r.content).findall("sm:url", SM):
            loc = u.findtext("sm:loc", namespaces=SM).removeprefix("http://testserver")
            out.append((loc, u.findtext("sm:lastmod", namespaces=SM)))
    return out


def test_sitemap_lists_every_researcher_once(
    small_chunks: TestClient, engine: SearchEngine
) -> None:
    listed = listed_urls(small_chunks, "researchers")
    paths = [p for p, _ in listed]
    assert len(paths) == len(set(paths))
    everyone, total = engine.people.search("", limit=10**6)
    assert total > CHUNK  # several chunks
    assert set(paths) == {researcher_url(r.rid, r.name) for r in everyone}
    # lastmod: the newest update among the researcher's papers.
    top = everyone[0]
    papers = engine.search(SearchRequest(filters=Filters(researcher_ids=(top.rid,)), page_size=50))
    newest = max(h.paper.updated for h in papers.hits).isoformat()
    assert dict(listed)[researcher_url(top.rid, top.name)] == newest
    for path in paths[:3] + paths[-3:]:  # canonical URLs: 200, no redirect
        assert small_chunks.get(path).status_code == 200, path


AFFILIATED = 3  # every third organisation of the registry has a paper here


def affiliated_papers(orgs: list[Organisation]) -> list[Paper]:
    """A paper for every ``AFFILIATED``-th organisation, its author's affiliation recorded
    as enrichment records it."""
    return [
        Paper(
            f"2001.{i:05d}", 1, f"Paper {i}", "Abstract.", parse_authors("Ann Author"),
            ("cs.DL",), date(2020, 1, 1), date(2020, 1, 1),
            extra=((AFFILIATIONS_KEY, json.dumps([[0, org.ror_id, org.name]])),),
        )
        for i, org in enumerate(orgs[::AFFILIATED], start=1)
    ]  # fmt: skip


@pytest.fixture(scope="module")
def registry_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The ROR fixture registry (528 organisations), a third of them with a paper here,
    chunks of 100."""
    config = make_config(tmp_path_factory.mktemp("sitemap-inst"))
    config = replace(config, feeds=replace(config.feeds, sitemap_urls=CHUNK))
    engine = SearchEngine(DataDir(config))
    engine.institutions.import_organisations(read_ror(ROR))
    engine.data.store.upsert(affiliated_papers(list(read_ror(ROR))))
    refresh_people(engine.data)  # the affiliations, as `index` records them
    with TestClient(create_app(engine, config), follow_redirects=False) as c:
        yield c
    engine.close()


def test_sitemap_lists_every_institution_with_a_paper_once(registry_client: TestClient) -> None:
    """Only institutions with a paper here: a page of the ~120k others has nothing to
    crawl (it still answers, for links)."""
    listed = listed_urls(registry_client, "institutions")
    paths = [p for p, _ in listed]
    assert len(paths) == len(set(paths)) and all(mod is None for _, mod in listed)
    orgs = [o for o in list(read_ror(ROR))[::AFFILIATED] if o.status != "withdrawn"]
    assert len(paths) == len(orgs) > CHUNK
    reg = registry_client.app.state.ctx.engine.institutions  # type: ignore[attr-defined]
    expected = set()
    for org in orgs:
        found = reg.by_ror(org.ror_id)
        expected.add(institution_url(found.iid, found.name))
    assert set(paths) == expected
    for path in paths[:3] + paths[-3:]:
        assert registry_client.get(path).status_code == 200, path
    # Importing more of the registry (which bumps no paper sequence) changes the validator.
    etag = registry_client.get("/sitemap.xml").headers["etag"]
    assert registry_client.get("/sitemap.xml", headers={"If-None-Match": etag}).status_code == 304
    reg.import_organisations([replace(orgs[0], ror_id="05new0x99", name="Newly Listed Lab")])
    again = registry_client.get("/sitemap.xml", headers={"If-None-Match": etag})
    assert again.status_code == 200
    # Listed once a paper of this index names it.
    newly = [p for p, _ in listed_urls(registry_client, "institutions")]
    assert not any(p.endswith("-newly-listed-lab") for p in newly)
    added = reg.by_ror("05new0x99")
    assert registry_client.get(institution_url(added.iid, added.name)).status_code == 200
    engine = registry_client.app.state.ctx.engine  # type: ignore[attr-defined]
    (paper,) = affiliated_papers([replace(orgs[0], ror_id="05new0x99", name="Newly Listed Lab")])
    engine.data.store.upsert([replace(paper, arxiv_id="2002.00001")])
    refresh_people(engine.data)
    assert any(
        p.endswith("-newly-listed-lab") for p, _ in listed_urls(registry_client, "institutions")
    )
