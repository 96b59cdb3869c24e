"""RSS and Atom feeds over the real app and index, read back by feedparser and lxml."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import feedparser
import pytest
from lxml import etree
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.paper import Author, Paper
from papersift.core.urls import institution_url, researcher_url
from papersift.engine.datadir import DataDir
from papersift.engine.institutions import Institutions
from papersift.engine.people import Researcher
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.ror import read_ror
from papersift.engine.search import SearchEngine, open_engine
from papersift.feeds.rss import FeedInfo, guid, render_feed
from papersift.indexer.build import import_files
from papersift.indexer.enrich_run import enrich_files
from papersift.indexer.identity_refresh import refresh_people
from papersift.server.app import create_app
from tests.corpus import add_merged_researcher, make_config, sample_records, write_jsonl
from tests.test_institution_pages import NCWU, ROR
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


def test_public_feeds_may_be_read_by_a_page_of_another_site(client: TestClient) -> None:
    """A feed reader running in the browser reads the public feeds across origins (CORS);
    the HTML pages stay same-origin."""
    for path in ("/rss/latest.xml", "/atom/cs.IR.xml", "/rss/search.xml?q=retrieval"):
        r = client.get(path, headers={"Origin": "https://reader.example"})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "*", path
    page = client.get("/feeds", headers={"Origin": "https://reader.example"})
    assert page.status_code == 200 and "access-control-allow-origin" not in page.headers


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
    [{"from": "yesterday"}, {"q": "x " * 10001}, {"category": "zz.NOPE"}, {"mode": "psychic"}],
)
def test_bad_search_feed_is_400(client: TestClient, params: dict[str, str]) -> None:
    assert client.get("/atom/search.xml", params=params).status_code == 400


def test_conditional_get(client: TestClient) -> None:
    r = client.get("/rss/cs.xml")
    assert r.headers["cache-control"] == "private, max-age=900"  # no base_url: Host-built links
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
    # The image is the SVG itself, of the type declared (not /favicon.ico, a redirect).
    (image,) = root.xpath("os:Image", namespaces=ns)
    icon = client.get(image.text.removeprefix("http://testserver"))
    assert icon.status_code == 200
    assert icon.headers["content-type"].split(";")[0] == image.get("type") == "image/svg+xml"


@pytest.fixture
def hostile_data(tmp_path: Any) -> Iterator[tuple[TestClient, Config]]:
    """An index of three real papers, one retitled with markup and a control character."""
    config: Config = make_config(tmp_path)
    records = sample_records()[:3]
    records[0] = {**records[0], "title": HOSTILE}
    data = DataDir(config)
    import_files(data, [write_jsonl(tmp_path / "h.jsonl", records)])
    refresh_people(data)
    data.close()
    engine = open_engine(config)
    with TestClient(create_app(engine, config)) as c:
        yield c, config
    engine.close()


@pytest.fixture
def hostile_client(hostile_data: tuple[TestClient, Config]) -> TestClient:
    return hostile_data[0]


@pytest.mark.parametrize("fmt", ["rss", "atom"])
def test_hostile_title_over_http(hostile_client: TestClient, fmt: str) -> None:
    feed = parsed(hostile_client.get(f"/{fmt}/latest.xml"), fmt)
    titles = [e.title for e in feed.entries]
    assert len(titles) == 3
    assert HOSTILE_SHOWN in titles


@pytest.fixture(scope="module")
def prolific(engine: SearchEngine) -> Researcher:
    """The researcher with the most papers in the demo corpus (several, all in one feed)."""
    found, _ = engine.people.search("", limit=1)
    assert found and 1 < found[0].papers <= 50
    return found[0]


@pytest.mark.parametrize("fmt", ["rss", "atom"])
def test_researcher_feed(
    client: TestClient, engine: SearchEngine, prolific: Researcher, fmt: str
) -> None:
    feed = parsed(client.get(f"/{fmt}/researchers/{prolific.rid}.xml"), fmt)
    ids = [arxiv_id_of(e) for e in feed.entries]
    assert ids == newest_ids(engine, filters=Filters(researcher_ids=(prolific.rid,)))
    assert len(ids) == prolific.papers
    for arxiv_id in ids:  # every item is by this researcher
        assert prolific.rid in engine.people.author_rids(arxiv_id)
    days = [e.published_parsed[:3] for e in feed.entries]
    assert days == sorted(days, reverse=True)
    assert feed.feed.link == "http://testserver" + researcher_url(prolific.rid, prolific.name)
    assert prolific.name in feed.feed.title


@pytest.mark.parametrize(
    "path",
    ["/rss/researchers/999999999.xml", "/atom/researchers/0.xml", "/rss/researchers/abc.xml",
     "/rss/researchers/1234567890123456789012.xml", "/rss/institutions/999999999.xml",
     "/atom/institutions/x.xml"],
)  # fmt: skip
def test_unknown_researcher_or_institution_feed_is_404(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 404


def test_researcher_page_links_its_feed(client: TestClient, prolific: Researcher) -> None:
    doc = parse_html(client.get(researcher_url(prolific.rid, prolific.name)).text)
    alternate = doc.xpath('//link[@rel="alternate"][@type="application/rss+xml"]/@href')
    assert alternate == [f"/rss/researchers/{prolific.rid}.xml"]
    follow = doc.xpath('//a[starts-with(., "Follow")]/@href')
    assert follow == alternate
    atom = doc.xpath('//p[@class="follow small"]/a[.="Atom"]/@href')
    assert atom == [f"/atom/researchers/{prolific.rid}.xml"]
    assert client.get(atom[0]).status_code == 200


def test_merged_researcher_feed_redirects(hostile_data: tuple[TestClient, Config]) -> None:
    """A researcher merged away (as ``indexer.identity`` leaves it) redirects to the heir."""
    client, config = hostile_data
    data = DataDir(config)
    heir = data.people.search("", limit=1)[0][0]
    gone = add_merged_researcher(data.store, heir.rid)
    data.close()
    r = client.get(f"/atom/researchers/{gone}.xml", follow_redirects=False)
    assert r.status_code == 301
    assert r.headers["location"] == f"/atom/researchers/{heir.rid}.xml"
    assert parsed(client.get(r.headers["location"]), "atom").entries


@pytest.fixture(scope="module")
def institutions_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The ROR fixture registry over an empty paper store."""
    config = make_config(tmp_path_factory.mktemp("inst-feeds"))
    engine = SearchEngine(DataDir(config))
    engine.institutions.import_organisations(read_ror(ROR))
    with TestClient(create_app(engine, config), follow_redirects=False) as c:
        yield c
    engine.close()


@pytest.mark.parametrize("fmt", ["rss", "atom"])
def test_institution_feed_is_empty_until_papers_link(
    institutions_client: TestClient, fmt: str
) -> None:
    found = institutions_client.app.state.ctx.engine.institutions.by_ror(NCWU)  # type: ignore[attr-defined]
    page = institution_url(found.iid, found.name)
    feed = parsed(institutions_client.get(f"/{fmt}/institutions/{found.iid}.xml"), fmt)
    assert feed.entries == []
    assert feed.feed.link == "http://testserver" + page
    assert found.name in feed.feed.title
    doc = parse_html(institutions_client.get(page).text)
    alternate = doc.xpath('//link[@rel="alternate"][@type="application/rss+xml"]/@href')
    assert alternate == [f"/rss/institutions/{found.iid}.xml"]
    assert doc.xpath('//a[starts-with(., "Follow")]/@href') == alternate
    assert institutions_client.get("/rss/institutions/999999.xml").status_code == 404


def test_institution_feed_lists_enriched_papers(tmp_path: Any) -> None:
    """A recorded OpenAlex work links one of three papers to a ROR id: only it is listed."""
    from tests.test_enrich import OA_WORK, PAPERS

    config = make_config(tmp_path)
    data = DataDir(config)
    data.store.upsert(PAPERS)
    data.sync_lexical()
    enrich_files(data, [OA_WORK])
    template = next(iter(read_ror(ROR)))
    lab = replace(template, ror_id="05ppvf150", name="Impact Technology Development")
    Institutions(data.store).import_organisations([lab])
    data.close()
    engine = open_engine(config)
    found = engine.institutions.by_ror("05ppvf150")
    assert found is not None
    with TestClient(create_app(engine, config)) as c:
        for fmt in ("rss", "atom"):
            feed = parsed(c.get(f"/{fmt}/institutions/{found.iid}.xml"), fmt)
            assert [arxiv_id_of(e) for e in feed.entries] == ["1802.00001"]
    engine.close()
