"""The HTML pages over the real app and index: content, links, metadata, redirects, errors."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.urls import researcher_url
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.snapshot import record_to_paper
from papersift.server.app import create_app
from tests.corpus import demo_records
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

ZERO_BUBBLE = "/papers/2401.10241-zero-bubble-pipeline-parallelism"
OLD_STYLE = "/papers/cmp-lg/9405001-similarity-based-estimation-of-word-cooccurrence-probabilities"


def page(client: TestClient, url: str, status: int = 200) -> Any:
    r = client.get(url)
    assert r.status_code == status, (url, r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("text/html")
    return parse_html(r.text)


def jsonld(doc: Any) -> list[dict[str, Any]]:
    return [json.loads(s.text) for s in doc.xpath('//script[@type="application/ld+json"]')]


def ld_of(doc: Any, kind: str) -> dict[str, Any]:
    found = [d for d in jsonld(doc) if d["@type"] == kind]
    assert len(found) == 1, [d["@type"] for d in jsonld(doc)]
    return found[0]


def meta(doc: Any, key: str) -> str:
    values = doc.xpath(f'//meta[@name="{key}" or @property="{key}"]/@content')
    assert len(values) == 1, key
    return str(values[0])


def hit_ids(doc: Any) -> list[str]:
    return [s.text_content().removeprefix("arXiv:") for s in doc.cssselect(".hit .arxiv-id")]


def query_of(href: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(href).query)


def check_head(doc: Any, canonical: str) -> None:
    """What every page carries: canonical link, description, OpenGraph, WebSite JSON-LD."""
    assert doc.xpath('//link[@rel="canonical"]/@href') == [canonical]
    assert doc.findtext(".//title").strip()
    assert meta(doc, "description")
    assert meta(doc, "og:url") == canonical
    assert meta(doc, "og:title") and meta(doc, "og:description")
    site = ld_of(doc, "WebSite")
    action = site["potentialAction"]
    assert action["@type"] == "SearchAction"
    assert "{search_term_string}" in action["target"]["urlTemplate"]
    assert doc.xpath("//html/@lang") == ["en"]


def test_home(client: TestClient, engine: SearchEngine) -> None:
    doc = page(client, "/")
    check_head(doc, "http://testserver/")
    form = doc.cssselect("form[role=search]")[0]
    assert form.get("action") == "/search" and form.cssselect("input[name=q]")
    latest = hit_ids(doc)
    newest = engine.search(SearchRequest(sort="newest"))
    assert latest == [h.paper.arxiv_id for h in newest.hits[: len(latest)]] and latest
    stats = engine.stats()
    cats = {
        a.text_content(): a.getparent().cssselect(".count")[0].text_content()
        for a in doc.cssselect(".cat-list a")
    }
    top = stats.categories[0]
    assert cats[top.value] == f"{top.count:,}"
    assert f"{stats.papers:,}" in doc.cssselect("dl.stats")[0].text_content()
    assert doc.xpath('//link[@rel="alternate"][@type="application/rss+xml"]/@href') == [
        "/rss/latest.xml"
    ]


def test_search_results_page(client: TestClient) -> None:
    doc = page(client, "/search?q=pipeline+parallelism")
    check_head(doc, "http://testserver/search")
    assert "2401.10241" in hit_ids(doc)[:3]
    hit = doc.cssselect(".hit")[0]
    assert hit.cssselect(".hit-title a")[0].get("href").startswith("/papers/")
    assert doc.xpath('//ol[@class="hits"]//b'), "query terms are highlighted"
    for a in hit.cssselect(".authors a"):  # author names lead to researcher pages
        assert a.get("href").startswith("/researchers/")
    for a in hit.cssselect(".badge"):
        assert a.get("href") == f"/categories/{a.text_content()}"
    assert hit.cssselect("time[datetime]")
    assert doc.cssselect("input[name=q]")[0].get("value") == "pipeline parallelism"
    # Sort and mode switches keep the query and mark the current choice.
    current = doc.xpath('//nav[@aria-label="Sort order"]//a[@aria-current]')
    assert [a.text_content() for a in current] == ["Relevance"]
    for a in doc.xpath('//nav[@aria-label="Search mode"]//a'):
        assert query_of(a.get("href"))["q"] == ["pipeline parallelism"]
    assert ld_of(doc, "BreadcrumbList")["itemListElement"][-1]["name"] == "Search"


def test_facets_add_and_remove_filters(client: TestClient) -> None:
    doc = page(client, "/search?q=language&mode=keyword")
    facet = doc.xpath('//aside[@aria-label="Filters"]//section[h2="Categories"]//a')[0]
    cat = facet.text_content()
    count = int(facet.getparent().cssselect(".count")[0].text_content().replace(",", ""))
    assert query_of(facet.get("href"))["category"] == [cat]
    filtered = page(client, facet.get("href"))
    total = filtered.cssselect(".result-count")[0].text_content()
    assert total.strip().startswith(f"{count:,} paper")
    for hit in filtered.cssselect(".hit"):
        assert cat in [b.text_content() for b in hit.cssselect(".badge")] or any(
            b.text_content().startswith(cat + ".") for b in hit.cssselect(".badge")
        )
    chip = filtered.cssselect(".chips a.chip")[0]
    assert "category" not in query_of(chip.get("href"))
    assert query_of(chip.get("href"))["q"] == ["language"]


def test_browse_paginates_newest_first(client: TestClient) -> None:
    first = page(client, "/search")
    ids = hit_ids(first)
    assert len(ids) == 24
    dates = [t.get("datetime") for t in first.cssselect(".hit time")]
    assert dates == sorted(dates, reverse=True)
    nxt = first.xpath('//nav[@class="pager"]/a[@rel="next"]/@href')[0]
    assert query_of(nxt)["page"] == ["2"]
    second = page(client, nxt)
    assert not set(hit_ids(second)) & set(ids)
    assert second.xpath('//nav[@class="pager"]//a[@aria-current="page"]/text()') == ["2"]
    assert second.xpath("//ol[@class='hits']/@start") == ["25"]


def test_filters_by_researcher_category_and_date(client: TestClient) -> None:
    doc = page(client, "/search?researcher=Lillian+Lee")
    assert "cmp-lg/9405001" in hit_ids(doc)
    for hit in doc.cssselect(".hit"):
        assert "Lillian Lee" in [a.text_content() for a in hit.cssselect(".authors a")]
    doc = page(client, "/search?category=CMP-LG&from=1994&to=1995-06")
    assert hit_ids(doc)
    for hit in doc.cssselect(".hit"):
        assert "1994-01-01" <= hit.cssselect("time")[0].get("datetime") <= "1995-06-30"
        assert "cmp-lg" in [b.text_content() for b in hit.cssselect(".badge")]
    chips = [c.text_content() for c in doc.cssselect(".chip")]
    assert any("cmp-lg" in c for c in chips), "the category's case was fixed"


def test_empty_result_suggests(client: TestClient) -> None:
    # No cs.CL paper has the words; one paper of another category has them, several are
    # about it. (Two words: "plagiarism" alone is closest to a paper at a similarity of
    # 0.348 on a CPU with AVX-512 VNNI, under the semantic gate of 0.35.)
    doc = page(client, "/search?q=plagiarism+detection&mode=keyword&category=cs.CL")
    assert "No papers found" in doc.cssselect(".result-count")[0].text_content()
    links = {a.text_content().rsplit(" (", 1)[0]: a.get("href") for a in doc.cssselect(".empty a")}
    without = links["Search again without any filter"]
    assert "category" not in query_of(without)
    assert query_of(without)["q"] == ["plagiarism detection"]
    semantic = links["Search by meaning (semantic mode)"]
    assert query_of(semantic)["mode"] == ["semantic"] and query_of(semantic)["category"]
    # Not where semantic search would find nothing new: hybrid holds its matches already,
    # and a query of fielded clauses alone gives the model nothing to read.
    for url in ("/search?q=qwxzvbnmplk&mode=hybrid", "/search?q=cites:2401.10241&mode=keyword"):
        doc = page(client, url)
        labels = [a.text_content() for a in doc.cssselect(".empty a")]
        assert labels and "Search by meaning (semantic mode)" not in labels, url


def test_parse_warning_shown_as_hint(client: TestClient) -> None:
    doc = page(client, '/search?q="word+sense')
    hints = [h.text_content() for h in doc.cssselect(".hint")]
    assert any("quote" in h for h in hints), hints


def test_arxiv_id_query_points_to_paper(client: TestClient) -> None:
    doc = page(client, "/search?q=2401.10241")
    assert doc.cssselect(".direct a")[0].get("href") == ZERO_BUBBLE


def test_paper_page(client: TestClient) -> None:
    doc = page(client, ZERO_BUBBLE)
    canonical = "http://testserver" + ZERO_BUBBLE
    check_head(doc, canonical)
    assert doc.cssselect("h1")[0].text_content() == "Zero Bubble Pipeline Parallelism"
    authors = [a.text_content() for a in doc.cssselect(".paper-authors a")]
    assert authors == ["Penghui Qi", "Xinyi Wan", "Guangxing Huang", "Min Lin"]
    assert doc.cssselect(".abstract")[0].text_content().startswith("Pipeline parallelism")
    hrefs = doc.xpath("//a/@href")
    assert "https://arxiv.org/abs/2401.10241" in hrefs
    assert "https://arxiv.org/pdf/2401.10241" in hrefs
    assert "/papers/2401.10241.bib" in hrefs
    assert "@misc{" in doc.cssselect(".bibtex pre")[0].text_content()
    assert meta(doc, "og:type") == "article"
    assert meta(doc, "citation_arxiv_id") == "2401.10241"
    article = ld_of(doc, "ScholarlyArticle")
    assert article["name"] == "Zero Bubble Pipeline Parallelism"
    assert [a["name"] for a in article["author"]] == authors
    assert article["url"] == canonical
    assert article["datePublished"].startswith("2024")
    crumbs = ld_of(doc, "BreadcrumbList")["itemListElement"]
    assert [c["position"] for c in crumbs] == [1, 2, 3]
    assert crumbs[1]["item"] == "http://testserver/categories/cs.DC"
    assert doc.xpath('//link[@rel="alternate"]/@href') == ["/rss/cs.DC.xml"]
    similar = doc.cssselect(".similar .hit-title a")
    assert similar and all(a.get("href").startswith("/papers/") for a in similar)
    assert ZERO_BUBBLE not in [a.get("href") for a in similar]


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("/papers/2401.10241", ZERO_BUBBLE),
        ("/papers/2401.10241v1", ZERO_BUBBLE),
        ("/papers/2401.10241v1-zero-bubble-pipeline-parallelism", ZERO_BUBBLE),
        ("/papers/2401.10241-wrong-slug", ZERO_BUBBLE),
        ("/papers/2401.10241-zero-bubble-pipeline-parallelism/", ZERO_BUBBLE),
        ("/papers/arXiv:2401.10241", ZERO_BUBBLE),
        ("/papers/cmp-lg/9405001", OLD_STYLE),
        ("/papers/cmp-lg/9405001v1", OLD_STYLE),
        ("/abs/2401.10241", ZERO_BUBBLE),
        ("/abs/cmp-lg/9405001v1", OLD_STYLE),
        ("/abs/cmp-lg/9405001v2", "/papers/cmp-lg/9405001v2"),
        ("/categories/CS.ir", "/categories/cs.IR"),
    ],
)
def test_redirects_are_permanent(client: TestClient, url: str, target: str) -> None:
    r = client.get(url)
    assert r.status_code == 301
    assert r.headers["location"] == target


@pytest.mark.parametrize("url", ["/papers/2401.10241v9", "/papers/2401.10241v2-zero-bubble"])
def test_a_version_the_index_lacks_is_a_visible_notice(client: TestClient, url: str) -> None:
    """Not a silent redirect: the latest version's page, saying the asked one is not here,
    linking arXiv's, and pointing search engines at the canonical page."""
    r = client.get(url)
    assert r.status_code == 200
    doc = parse_html(r.text)
    version = url.split("v")[-1].split("-")[0]
    (notice,) = doc.cssselect(".version-notice")
    assert f"no version {version} of arXiv:2401.10241" in notice.text_content()
    assert notice.cssselect("a")[0].get("href") == f"https://arxiv.org/abs/2401.10241v{version}"
    assert doc.xpath('//link[@rel="canonical"]/@href') == ["http://testserver" + ZERO_BUBBLE]
    assert doc.xpath('//meta[@name="robots"]/@content') == ["noindex,follow"]
    assert not page(client, ZERO_BUBBLE).cssselect(".version-notice")


def test_tex_outside_math_is_decoded(client: TestClient) -> None:
    """Accents written in TeX outside math read as Unicode on the paper page."""
    doc = parse_html(client.get("/papers/1103.5162", follow_redirects=True).text)
    abstract = doc.cssselect(".abstract")[0].text_content()
    assert "Conseil Général de la Moselle" in abstract and "\\'" not in abstract


def test_canonical_paper_urls_answer_directly(client: TestClient) -> None:
    for url in (ZERO_BUBBLE, OLD_STYLE):
        doc = page(client, url)
        assert doc.xpath('//link[@rel="canonical"]/@href') == ["http://testserver" + url]


def test_bibtex_download(client: TestClient) -> None:
    r = client.get("/papers/cmp-lg/9405001.bib")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/x-bibtex")
    assert r.headers["content-disposition"] == 'attachment; filename="cmp-lg-9405001.bib"'
    assert r.text.startswith("@misc{dagan1994")
    assert "eprint = {cmp-lg/9405001}" in r.text
    assert r.text.count("{") == r.text.count("}")


@pytest.mark.parametrize(
    "url", ["/papers/2401.99999", "/papers/not-a-paper", "/nope", "/categories/zz.XX"]
)
def test_helpful_404(client: TestClient, url: str) -> None:
    doc = page(client, url, 404)
    assert doc.cssselect("form[role=search] input[name=q]")
    text = doc.text_content()
    assert "/papers/" in text and "/researchers/" in text
    assert meta(doc, "robots") == "noindex"


def test_category_page(client: TestClient) -> None:
    doc = page(client, "/categories/cs.IR")
    check_head(doc, "http://testserver/categories/cs.IR")
    assert doc.cssselect("h1")[0].text_content() == "cs.IR: Information Retrieval"
    feeds = doc.xpath('//link[@rel="alternate"][@type="application/rss+xml"]/@href')
    assert feeds == ["/rss/cs.IR.xml", "/rss/latest.xml"]
    assert hit_ids(doc)
    for hit in doc.cssselect(".hit"):
        assert "cs.IR" in [b.text_content() for b in hit.cssselect(".badge")]


def test_categories_index(client: TestClient, engine: SearchEngine) -> None:
    doc = page(client, "/categories")
    listed = [a.text_content() for a in doc.cssselect(".cat-table a")]
    assert listed == [c.value for c in engine.stats().categories]


def test_developers_page(client: TestClient, engine: SearchEngine) -> None:
    doc = page(client, "/developers")
    # The paging limits it states are the ones the API enforces.
    cfg = engine.config.search
    text = " ".join(doc.text_content().split())
    assert f"(at most {cfg.max_page_size})" in text
    assert f"only the first {cfg.max_window:,} results can be paged through" in text
    over = {"q": "parsing", "page_size": cfg.max_page_size + 1}
    assert client.get("/api/v1/search", params=over).status_code == 400
    # Past the window, a list that ends sooner (every list here) is the empty page after
    # its last; test_past_window has the 400 of a longer one.
    past = {"q": "parsing", "page_size": 10, "page": cfg.max_window // 10 + 1}
    body = client.get("/api/v1/search", params=past).json()
    assert body["hits"] == [] and body["pages"] < past["page"]
    assert f"page {past['page']} is past the last page ({body['pages']})" in body["warnings"]
    code = " ".join(c.text_content() for c in doc.cssselect("pre code"))
    assert "http://testserver/api/v1/search?" in code
    assert "/openapi.json" in doc.xpath("//a/@href")
    # The documented error example is what the API really answers.
    example = next(
        c.text_content() for c in doc.cssselect("pre code") if '"error"' in c.text_content()
    )
    command, answer = example.strip().split("\n", 1)
    url = command.split("'")[1].removeprefix("http://testserver")
    assert client.get(url).json() == json.loads(answer)


class _Broken:
    """The real engine, except that searching fails unexpectedly."""

    def __init__(self, engine: SearchEngine) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def search(self, request: object) -> None:
        raise RuntimeError("secret internal detail /srv/papersift")


def test_plain_500_reveals_nothing(engine: SearchEngine, built_config: Config) -> None:
    app = create_app(_Broken(engine), built_config)  # type: ignore[arg-type]
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/search?q=x")
        assert r.status_code == 500
        assert "secret" not in r.text and "Traceback" not in r.text and "srv" not in r.text
        assert parse_html(r.text).cssselect("h1")[0].text_content() == "Something went wrong"
        assert "default-src 'self'" in r.headers["content-security-policy"]
        r = c.get("/api/v1/search?q=x")
        assert r.status_code == 500
        assert r.json() == {
            "error": {"status": 500, "code": "internal_error", "message": "Internal server error."}
        }


def test_empty_states_say_what_fills_them(client: TestClient) -> None:
    """The session index has no institutions and no citation counts. A visitor is told
    where they come from; the commands are the admin's (tests/test_admin_view.py)."""
    doc = page(client, "/institutions")
    note = doc.cssselect(".empty-state")[0].text_content()
    assert "ROR registry" in note and "enrichment" in note and "papersift" not in note
    # A name looked for then gets the same words, not "No institution's name contains".
    doc = page(client, "/institutions?q=MIT")
    note = " ".join(doc.cssselect(".empty-state")[0].text_content().split())
    assert note.startswith("No institutions yet, so none is named “MIT”.")
    assert "ROR registry" in note
    doc = page(client, "/search?q=retrieval")
    sorts = [a.text_content() for a in doc.cssselect("nav[aria-label='Sort order'] a")]
    assert "Newest" in sorts and "Most cited" not in sorts
    doc = page(client, "/search?q=retrieval&sort=cited")  # an old link still answers
    hints = [h.text_content() for h in doc.cssselect(".hint")]
    assert any("no paper has a citation count yet; sorted by" in h for h in hints), hints


@pytest.mark.slow
def test_citation_counts_bring_most_cited(fresh_config: Config) -> None:
    """With a citation count in the index: the sort is offered, the card shows the count,
    and the researcher's header names their most cited paper."""
    papers = [record_to_paper(r) for r in demo_records()[:40]]
    cited = replace(papers[3], citation_count=1234)
    data = DataDir(fresh_config)
    data.store.upsert([*papers[:3], cited, *papers[4:]])
    data.sync_lexical()
    refresh_people(data)
    engine = SearchEngine(data)
    with TestClient(create_app(engine, fresh_config)) as c:
        doc = page(c, "/search?q=the")
        sorts = [a.text_content() for a in doc.cssselect("nav[aria-label='Sort order'] a")]
        assert "Most cited" in sorts
        doc = page(c, "/search?sort=cited")
        assert doc.cssselect(".hit .cites")[0].text_content() == "1,234 citations"
        rid = engine.people.author_rids(cited.arxiv_id)[0]
        assert rid is not None
        doc = page(c, researcher_url(rid, cited.authors[0].name))
        most = doc.xpath("//header//dt[.='Most cited']/following-sibling::dd[1]")[0]
        assert most.cssselect("a")[0].get("href").startswith(f"/papers/{cited.arxiv_id}-")
    engine.close()


def test_researchers_and_institutions_are_announced(client: TestClient) -> None:
    """Nav, home, 404, /developers and /llms.txt point at the researcher and institution
    pages and their API, and no longer call them "coming"."""
    home = page(client, "/")
    nav = [a.get("href") for a in home.cssselect("header.site nav a")]
    assert "/researchers" in nav and "/institutions" in nav
    assert home.cssselect(".index-card a[href='/researchers']")
    missing = page(client, "/papers/9912.99999", 404).text_content()
    assert "coming" not in missing and "/researchers" in missing
    llms = client.get("/llms.txt").text
    assert "coming" not in llms
    for text in (llms, page(client, "/developers").text_content()):
        assert "/api/v1/researchers" in text and "/api/v1/institutions" in text
        assert "researcher_id" in text
