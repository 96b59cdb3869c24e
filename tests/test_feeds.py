"""RSS and Atom feeds over the real app and index, read back by feedparser and lxml."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import feedparser
import pytest
from lxml import etree
from starlette.testclient import TestClient

from engine.datadir import DataDir
from engine.results import Filters, SearchRequest
from engine.search import SearchEngine, open_engine
from feeds.rss import FeedInfo, guid, render_feed
from indexer.build import import_files
from papersift.config import Config
from papersift.paper import Author, Paper
from server.app import create_app
from tests.corpus import make_config, sample_records, write_jsonl
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

ATOM = "{http://www.w3.org/2005/Atom}"
HOSTILE = 'Breaking <script>alert("x")</script> & ]]> <b>bold</b> "quotes" \x0b end'
HOSTILE_SHOWN = 'Breaking <script>alert("x")</script> & ]]> <b>bold</b> "quotes" end'


def parsed(r: Any, kind: str) -> Any:
    """The response as feedparser sees it, after checking the type and well-formedness."""
    assert r.status_code == 200, (r.status_code, r.text[:300])
    assert r.headers["content-type"] == f"application/{kind}+xml; charset=utf-8"
    etree.fromstring(r.content)  # well-formed XML, or this raises
    feed = feedparser.parse(r.content)
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.version == ("rss20" if kind == "rss" else "atom10")
    return feed


def arxiv_id_of(entry: Any) -> str:
    return str(entry.link).split("/papers/", 1)[1].rsplit("-", 1)[0].split("-")[0]


def newest_ids(engine: SearchEngine, **kwargs: Any) -> list[str]:
    result = engine.search(SearchRequest(sort="newest", page_size=50, **kwargs))
    return [h.paper.arxiv_id for h in result.hits]


def paper(title: str, arxiv_id: str = "2401.00001", day: int = 5) -> Paper:
    return Paper(
        arxiv_id=arxiv_id,
        version=3,
        title=title,
        abstract="We show <i>that</i> a & b < c.",
        authors=(Author("Ada <Lovelace>", "lovelace ada"), Author("Alan Turing", "turing alan")),
        categories=("cs.CL", "cs.LG"),
        published=date(2024, 1, day),
        updated=date(2024, 2, day),
    )


@pytest.mark.parametrize("fmt", ["rss", "atom"])
def test_render_escapes_and_keeps_order(fmt: str) -> None:
    papers = [paper(HOSTILE, "2401.00002", 9), paper("Plain", "2401.00001", 2)]
    info = FeedInfo("A & B <feed>", "desc", "http://x.test/", f"http://x.test/{fmt}/latest.xml")
    body = render_feed(info, papers, fmt, lambda p: f"http://x.test/papers/{p.arxiv_id}")  # type: ignore[arg-type]
    root = etree.fromstring(body)
    feed = feedparser.parse(body)
    assert not feed.bozo
    assert feed.feed.title == "A & B <feed>"
    assert [e.title for e in feed.entries] == [HOSTILE_SHOWN, "Plain"]
    assert feed.entries[0].id.endswith("2401.00002v3")
    first = feed.entries[0]
    assert [a.name for a in first.authors] == ["Ada <Lovelace>", "Alan Turing"]
    assert [t.term for t in first.tags] == ["cs.CL", "cs.LG"]
    assert first.published_parsed[:3] == (2024, 1, 9)
    # The abstract arrives as escaped HTML: the reader shows the tags as text.
    assert "We show &lt;i&gt;that&lt;/i&gt; a &amp; b &lt; c." in first.summary
    assert "https://arxiv.org/pdf/2401.00002" in first.summary
    if fmt == "rss":
        assert root.findtext("channel/item/guid") == guid(papers[0]) == "2401.00002v3"
        assert root.find("channel/item/guid").get("isPermaLink") == "false"
        assert root.findtext("channel/lastBuildDate") == "Fri, 09 Feb 2024 00:00:00 +0000"
    else:
        links = {(link.rel, link.get("type")): link.href for link in first.links}
        assert links[("alternate", "text/html")] == "http://x.test/papers/2401.00002"
        assert links[("related", "application/pdf")] == "https://arxiv.org/pdf/2401.00002"
        assert root.findtext(f"{ATOM}updated") == "2024-02-09T00:00:00+00:00"
    assert render_feed(info, papers, fmt, lambda p: "http://x.test/") == render_feed(  # type: ignore[arg-type]
        info,
        papers,
        fmt,
        lambda p: "http://x.test/",  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("fmt", ["rss", "atom"])
def test_latest_feed(client: TestClient, engine: SearchEngine, fmt: str) -> None:
    feed = parsed(client.get(f"/{fmt}/latest.xml"), fmt)
    assert [arxiv_id_of(e) for e in feed.entries] == newest_ids(engine)
    assert len(feed.entries) == 50
    days = [e.published_parsed[:3] for e in feed.entries]
    assert days == sorted(days, reverse=True)
    for e in feed.entries:
        assert e.link.startswith("http://testserver/papers/")
        assert "https://arxiv.org/abs/" in e.summary
    assert feed.feed.link == "http://testserver/"


def test_feed_links_resolve_to_paper_pages(client: TestClient) -> None:
    feed = parsed(client.get("/rss/latest.xml"), "rss")
    for entry in feed.entries[:5]:
        assert client.get(entry.link.removeprefix("http://testserver")).status_code == 200


def test_category_and_archive_feeds(client: TestClient, engine: SearchEngine) -> None:
    feed = parsed(client.get("/atom/cs.CL.xml"), "atom")
    assert feed.entries
    assert [arxiv_id_of(e) for e in feed.entries] == newest_ids(
        engine, filters=Filters(categories=("cs.CL",))
    )
    assert all("cs.CL" in [t.term for t in e.tags] for e in feed.entries)
    archive = parsed(client.get("/rss/cs.xml"), "rss")
    terms = [[t.term for t in e.tags] for e in archive.entries]
    assert all(any(t.startswith("cs.") for t in ts) for ts in terms)
    assert len({t for ts in terms for t in ts if t.startswith("cs.")}) > 1  # more than one cs.*
    assert archive.feed.link == "http://testserver/categories/cs"


def test_unknown_category_is_404_and_case_redirects(client: TestClient) -> None:
    assert client.get("/rss/zz.XX.xml").status_code == 404
    assert client.get("/atom/nonsense.xml").status_code == 404
    r = client.get("/rss/CS.cl.xml")
    assert r.status_code == 301 and r.headers["location"] == "/rss/cs.CL.xml"


def test_search_feed(client: TestClient, engine: SearchEngine) -> None:
    feed = parsed(client.get("/rss/search.xml", params={"q": "graph", "category": "cs"}), "rss")
    expected = newest_ids(engine, query="graph", filters=Filters(categories=("cs",)))
    assert expected and [arxiv_id_of(e) for e in feed.entries] == expected
    assert parse_qs(urlsplit(feed.feed.link).query) == {"q": ["graph"], "category": ["cs"]}


@pytest.mark.parametrize(
    "params",
    [{"from": "yesterday"}, {"q": "x" * 5000}, {"category": "zz.NOPE"}, {"mode": "psychic"}],
)
def test_bad_search_feed_is_400(client: TestClient, params: dict[str, str]) -> None:
    assert client.get("/atom/search.xml", params=params).status_code == 400


def test_conditional_get(client: TestClient) -> None:
    r = client.get("/rss/cs.xml")
    assert r.headers["cache-control"] == "public, max-age=900"
    etag, modified = r.headers["etag"], r.headers["last-modified"]
    again = client.get("/rss/cs.xml", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert client.get("/rss/cs.xml", headers={"If-Modified-Since": modified}).status_code == 304
    old = format_datetime(parsed_date(modified).replace(year=2001), usegmt=True)
    assert client.get("/rss/cs.xml", headers={"If-Modified-Since": old}).status_code == 200
    # A stale ETag wins over a fresh date: the ETag decides.
    stale = {"If-None-Match": 'W/"old"', "If-Modified-Since": modified}
    assert client.get("/rss/cs.xml", headers=stale).status_code == 200
    assert client.get("/atom/cs.xml", headers={"If-None-Match": etag}).status_code == 200


def parsed_date(text: str) -> Any:
    from email.utils import parsedate_to_datetime

    return parsedate_to_datetime(text)


def test_discovery_links(client: TestClient) -> None:
    doc = parse_html(client.get("/search", params={"q": "graph", "category": "cs"}).text)
    feeds = doc.xpath('//link[@rel="alternate"][@type="application/rss+xml"]/@href')
    assert feeds[0] == "/rss/search.xml?q=graph&category=cs"
    follow = doc.xpath('//a[contains(., "Follow this search as a feed")]/@href')
    assert follow == [feeds[0]]
    assert client.get(follow[0]).status_code == 200
    assert doc.xpath('//link[@rel="search"]/@href') == ["/opensearch.xml"]
    assert "/feeds" in doc.xpath("//footer//a/@href")
    browse = parse_html(client.get("/search").text)
    assert not browse.xpath('//a[contains(., "Follow this search")]')


def test_feeds_page_lists_working_feeds(client: TestClient, engine: SearchEngine) -> None:
    doc = parse_html(client.get("/feeds").text)
    hrefs = doc.xpath('//a[@class="feed"]/@href')
    top = engine.stats().categories[0].value
    for href in ("/rss/latest.xml", "/atom/latest.xml", f"/rss/{top}.xml", "/atom/cs.xml"):
        assert href in hrefs
    assert len(hrefs) == 2 * (1 + len(engine.stats().categories) + len(archives(engine)))
    for href in hrefs[:4] + hrefs[-2:]:
        assert client.get(href).status_code == 200, href


def archives(engine: SearchEngine) -> set[str]:
    return {c.value.split(".")[0] for c in engine.stats().categories if "." in c.value}


def test_opensearch_description(client: TestClient) -> None:
    r = client.get("/opensearch.xml")
    assert r.headers["content-type"].startswith("application/opensearchdescription+xml")
    root = etree.fromstring(r.content)
    ns = {"os": "http://a9.com/-/spec/opensearch/1.1/"}
    templates = root.xpath("os:Url/@template", namespaces=ns)
    assert "http://testserver/search?q={searchTerms}" in templates
    assert root.xpath("os:ShortName/text()", namespaces=ns) == ["papersift"]


@pytest.fixture
def hostile_client(tmp_path: Any) -> Iterator[TestClient]:
    """An index of three real papers, one retitled with markup and a control character."""
    config: Config = make_config(tmp_path)
    records = sample_records()[:3]
    records[0] = {**records[0], "title": HOSTILE}
    data = DataDir(config)
    import_files(data, [write_jsonl(tmp_path / "h.jsonl", records)])
    data.close()
    engine = open_engine(config)
    with TestClient(create_app(engine, config)) as c:
        yield c
    engine.close()


@pytest.mark.parametrize("fmt", ["rss", "atom"])
def test_hostile_title_over_http(hostile_client: TestClient, fmt: str) -> None:
    feed = parsed(hostile_client.get(f"/{fmt}/latest.xml"), fmt)
    titles = [e.title for e in feed.entries]
    assert len(titles) == 3
    assert HOSTILE_SHOWN in titles
