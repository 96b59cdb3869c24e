"""Researcher pages, redirects, author links, the researcher filter and the API, over HTTP."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from lxml import etree
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.urls import researcher_url
from papersift.engine.datadir import DataDir
from papersift.engine.people import Researcher
from papersift.engine.results import Filters, Mode, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.snapshot import record_to_paper
from papersift.server.app import create_app
from tests.corpus import demo_records
from tests.test_web_api import check
from tests.test_web_pages import ZERO_BUBBLE, check_head, hit_ids, ld_of, page

pytest_plugins = ["tests.web_fixtures"]


@pytest.fixture(scope="module")
def bornmann(engine: SearchEngine) -> Researcher:
    found, total = engine.people.search("lutz bornmann")
    assert total == 1
    return found[0]


def _canonical(r: Researcher) -> str:
    return f"/researchers/{r.rid}-lutz-bornmann"


def test_researcher_page(client: TestClient, engine: SearchEngine, bornmann: Researcher) -> None:
    url = _canonical(bornmann)
    doc = page(client, url)
    check_head(doc, "http://testserver" + url)
    assert doc.cssselect("h1")[0].text_content() == "Lutz Bornmann"
    person = ld_of(doc, "Person")
    assert person["name"] == "Lutz Bornmann" and person["url"] == "http://testserver" + url
    # The paper list is the researcher filter of the normal search.
    expected = engine.search(SearchRequest(filters=Filters(researcher_ids=(bornmann.rid,))))
    assert hit_ids(doc) == [h.paper.arxiv_id for h in expected.hits]
    assert len(hit_ids(doc)) == bornmann.papers
    # Author positions, in the header, add up to the papers they are known for.
    header = doc.cssselect("article.researcher > header.profile")[0]
    cells = {
        li.get("data-position"): int(li.cssselect("strong")[0].text_content())
        for li in header.cssselect("ul.positions li")
    }
    assert set(cells) == {"first", "middle", "last", "solo"}
    note = header.cssselect("section[aria-labelledby=positions-h] p")[0].text_content()
    assert f"Known for {sum(cells.values())} of {bornmann.papers}" in note
    assert sum(cells.values()) == bornmann.papers
    # The header says where the identity comes from (no ids before enrichment).
    identity = header.xpath(".//dt[.='Identity']/following-sibling::dd[1]")[0].text_content()
    assert "no ORCID, OpenAlex or Semantic Scholar id yet" in identity
    # The paper list comes right after the header, before the charts and the graph.
    order = [e.get("id") for e in doc.xpath("//h2[@id]")]
    assert order.index("papers-h") < order.index("years-h") < order.index("network-h")
    # Fields link to the filtered list; the charts are inline SVG with links.
    for a in doc.cssselect("ul.fields a"):
        q = parse_qs(urlsplit(a.get("href")).query)
        assert q["researcher_id"] == [str(bornmann.rid)] and q["category"] == [a.text_content()]
    svgs = doc.xpath("//figure/*[local-name()='svg']")
    assert len(svgs) == 2
    for svg in svgs:
        etree.fromstring(etree.tostring(svg))  # well-formed
    coauthors = [a.get("href") for a in doc.cssselect("ul.coauthors a")]
    assert coauthors and all(h.startswith("/researchers/") for h in coauthors)
    assert client.get(coauthors[0]).status_code == 200
    assert not doc.xpath("//script[@src and not(starts-with(@src, '/static/'))]")


@pytest.mark.parametrize("suffix", ["", "-wrong-slug", "-LUTZ-bornmann", "/"])
def test_researcher_redirects(client: TestClient, bornmann: Researcher, suffix: str) -> None:
    r = client.get(f"/researchers/{bornmann.rid}{suffix}?sort=oldest", follow_redirects=False)
    assert r.status_code == 301
    assert r.headers["location"] == _canonical(bornmann) + "?sort=oldest"


@pytest.mark.parametrize("path", ["/researchers/999999999", "/researchers/abc", "/researchers/0"])
def test_unknown_researchers_are_404(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 404


def test_researcher_paper_list_sorts_and_pages(client: TestClient, bornmann: Researcher) -> None:
    url = _canonical(bornmann)
    doc = page(client, url + "?sort=oldest&page_size=2")
    dates = [t.get("datetime") for t in doc.cssselect(".hit time")]
    assert len(dates) == 2 and dates == sorted(dates)
    nxt = doc.xpath("//a[@rel='next']/@href")[0]
    assert nxt.startswith(url + "?") and "researcher_id" not in nxt
    second = page(client, nxt)
    assert set(hit_ids(second)).isdisjoint(hit_ids(doc))


def test_researchers_index_and_name_search(client: TestClient, bornmann: Researcher) -> None:
    doc = page(client, "/researchers")
    counts = [int(c.text_content().split()[0]) for c in doc.cssselect("ol.researchers .count")]
    assert counts == sorted(counts, reverse=True) and counts[0] >= bornmann.papers
    doc = page(client, "/researchers?q=BORNMANN")
    links = {a.text_content(): a.get("href") for a in doc.cssselect("ol.researchers a")}
    assert links["Lutz Bornmann"] == _canonical(bornmann)
    assert page(client, "/researchers?q=qqqzzz").cssselect("ol.researchers") == []


def test_author_names_link_to_researcher_pages(client: TestClient) -> None:
    doc = page(client, ZERO_BUBBLE)
    hrefs = [a.get("href") for a in doc.cssselect(".paper-authors a")]
    assert len(hrefs) == 4 and all(h.startswith("/researchers/") for h in hrefs)
    target = page(client, hrefs[0])
    assert target.cssselect("h1")[0].text_content() == "Penghui Qi"
    assert "2401.10241" in hit_ids(target)
    doc = page(client, "/search?q=bibliometrics")
    assert all(a.get("href").startswith("/researchers/") for a in doc.cssselect(".hit .authors a"))


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_researcher_filter_in_every_mode(
    engine: SearchEngine, bornmann: Researcher, mode: Mode
) -> None:
    req = SearchRequest(
        query="citation impact", mode=mode, filters=Filters(researcher_ids=(bornmann.rid,))
    )
    result = engine.search(req)
    assert result.mode == mode and result.hits
    for h in result.hits:
        assert bornmann.rid in engine.people.author_rids(h.paper.arxiv_id)
    facet = {f.value: f.count for f in result.facets["researchers"]}
    assert facet[str(bornmann.rid)] == result.total


def test_researcher_facet_and_chip_on_search_page(client: TestClient, bornmann: Researcher) -> None:
    doc = page(client, f"/search?researcher_id={bornmann.rid}")
    chips = [c.text_content() for c in doc.cssselect(".chip")]
    assert any("Researcher: Lutz Bornmann" in c for c in chips)
    facet = [a for a in doc.cssselect(".facets a") if a.text_content().endswith("Lutz Bornmann")]
    assert facet and facet[0].get("aria-current") == "true"
    assert client.get("/search?researcher_id=abc").status_code == 400


def test_api_researcher_facet_names_them_as_the_page_does(
    client: TestClient, bornmann: Researcher
) -> None:
    """The API's researcher facet gives each id its name (declared in the OpenAPI schema),
    the names the search page's facet shows, in its order; ``value`` and ``count`` stay."""
    spec: dict[str, Any] = client.get("/openapi.json").json()
    params = {"q": "citation impact", "researcher_id": str(bornmann.rid)}
    body = client.get("/api/v1/search", params=params).json()
    check(spec, "/api/v1/search", 200, body)
    facet = body["facets"]["researchers"]
    assert len(facet) > 3 and all(f.keys() == {"value", "count", "name"} for f in facet)
    assert {"value": str(bornmann.rid), "count": body["total"], "name": "Lutz Bornmann"} in facet
    doc = page(client, "/search?" + "&".join(f"{k}={v}" for k, v in params.items()))
    (section,) = [s for s in doc.cssselect(".facets section") if s.findtext("h2") == "Researchers"]
    shown = [a.text_content().removeprefix("✓ ") for a in section.cssselect("a")]
    assert shown == [f["name"] for f in facet][: len(shown)] and all(shown)
    schema = spec["components"]["schemas"]["SearchFacets"]["properties"]["researchers"]
    entry = spec["components"]["schemas"][schema["items"]["$ref"].rsplit("/", 1)[1]]
    assert set(entry["required"]) == {"value", "count", "name"}


def test_researcher_api(client: TestClient, bornmann: Researcher) -> None:
    spec: dict[str, Any] = client.get("/openapi.json").json()
    r = client.get("/api/v1/researchers?q=bornmann")
    assert r.status_code == 200
    body = r.json()
    check(spec, "/api/v1/researchers", 200, body)
    assert [x["id"] for x in body["researchers"]] == [bornmann.rid]
    r = client.get(f"/api/v1/researchers/{bornmann.rid}")
    check(spec, "/api/v1/researchers/{id}", 200, r.json())
    data = r.json()["researcher"]
    assert data["name"] == "Lutz Bornmann" and data["papers"] == bornmann.papers
    assert data["positions"]["known"] == bornmann.papers
    papers = client.get(data["papers_url"].removeprefix("http://testserver")).json()
    assert papers["total"] == bornmann.papers
    for bad, status in (("abc", 400), ("99999999", 404)):
        r = client.get(f"/api/v1/researchers/{bad}")
        assert r.status_code == status
        check(spec, "/api/v1/researchers/{id}", status, r.json())
    assert client.get("/api/v1/researchers?page=0").status_code == 400


def test_orcid_links_and_same_name_notes(fresh_config: Config) -> None:
    """Two "Paul Ginsparg"s with different ORCID iDs: each page links its ORCID (also in the
    JSON-LD) and lists the other with the reason they are apart."""
    wanted = {"0907.4740", "1412.2716"}
    papers = [record_to_paper(r) for r in demo_records() if r["id"] in wanted]
    orcids = {"0907.4740": "0000-0001-0000-0001", "1412.2716": "0000-0002-0000-0002"}
    edited = [
        replace(
            p,
            authors=tuple(
                replace(a, ids=(("orcid", orcids[p.arxiv_id]),)) if "Ginsparg" in a.name else a
                for a in p.authors
            ),
        )
        for p in papers
    ]
    data = DataDir(fresh_config)
    data.store.upsert(edited)
    data.sync_lexical()
    refresh_people(data)
    engine = SearchEngine(data)
    found, total = engine.people.search("ginsparg")
    assert total == 2
    first = found[0]
    with TestClient(create_app(engine, fresh_config)) as client:
        doc = page(client, researcher_url(first.rid, first.name))
        identity = doc.xpath("//header//dt[.='Identity']/following-sibling::dd[1]")[0]
        orcid = [a.get("href") for a in identity.cssselect("a")]
        assert len(orcid) == 1 and orcid[0].startswith("https://orcid.org/0000-000")
        assert ld_of(doc, "Person")["sameAs"] == orcid
        notes = [li.text_content() for li in doc.cssselect("ul.same-name li")]
        assert len(notes) == total - 1 and "different ORCID ids" in notes[0]
        # The header says so too, and links the explanation.
        same = doc.xpath("//header//dt[.='Same name']/following-sibling::dd[1]")[0]
        assert same.cssselect("a")[0].get("href") == "#same-h"
        assert "kept apart" in same.text_content()
        # Both say what joins papers in one sentence, the same, and no more than is true
        # (review 35: "only joined on evidence" where one spelling joins without it).
        section = doc.cssselect("#same-h + p")[0].text_content()
        rules = same.text_content().split("kept apart. ", 1)[1].strip()
        assert rules.startswith("Papers are joined by") and section.endswith(rules)
        assert "the same spelled-out name" in rules and "the same two or more initials" in rules
        assert "only joined" not in doc.text_content()
    engine.close()
