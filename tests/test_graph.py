"""The citation graph from recorded Semantic Scholar and OpenAlex responses: edges resolved
to our papers by arXiv id, DOI and source ids, both directions agreeing, re-enrichment
replacing a source's edges, the ``cites:``/``citedby:`` filters, the API lists and the paper
page's sections, over HTTP against the real app."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import httpx
import pytest

from papersift.core.authors import parse_authors
from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.enrich import apply_records
from papersift.indexer.enrich_run import enrich_files
from papersift.indexer.openalex import parse_work
from papersift.indexer.semanticscholar import parse_paper
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.web_helpers import parse_html, serving

HERE = Path(__file__).parent
S2_LINKS = HERE / "fixtures" / "graph" / "s2_turing_links.json"
OA_WORK = HERE / "fixtures" / "enrich" / "W2741809807.json"
TURING = "1802.00002"  # our record of the recorded S2 paper (it is not on arXiv)
OA = "1802.00001"  # ours of the recorded OpenAlex work
LONE = "1802.00003"  # in no recorded response


def _recorded() -> dict[str, object]:
    data: dict[str, object] = json.loads(S2_LINKS.read_text(encoding="utf-8"))
    return data


def _papers() -> list[Paper]:
    """Our records: the recorded S2 paper, two of its references (by their recorded DOIs),
    its recorded citers that are on arXiv (their ids, titles, abstracts, authors, dates), and
    the recorded OpenAlex work."""
    rec = _recorded()
    refs = {r["title"]: r for r in rec["references"]}  # type: ignore[union-attr, index]

    def paper(
        arxiv_id: str,
        title: str,
        authors: str,
        day: date,
        doi: str | None,
        abstract: str = "Abstract.",
    ) -> Paper:
        return Paper(
            arxiv_id, 1, title, abstract, parse_authors(authors), ("cs.AI",), day, day, doi=doi
        )

    out = [
        paper(
            TURING,
            "Computing Machinery and Intelligence",
            "A. M. Turing",
            date(2018, 2, 1),
            "10.1093/mind/lix.236.433",
        ),
        paper(
            OA,
            "The state of OA",
            "Heather Piwowar, Jason Priem",
            date(2018, 2, 13),
            "10.7717/PEERJ.4375",
        ),
        paper(LONE, "Open access and its discontents", "J. Priem", date(2018, 3, 1), None),
    ]
    for n, title in enumerate(
        (
            "On Computable Numbers, with an Application to the Entscheidungsproblem",
            "An Unsolvable Problem of Elementary Number Theory",
        )
    ):
        match = next(r for t, r in refs.items() if t.startswith(title[:30]))
        doi = match["externalIds"]["DOI"]
        out.append(paper(f"1802.0001{n}", title, "A. Church", date(2018, 2, 2), doi))
    for c in rec["citations"]:  # type: ignore[union-attr]
        arxiv = (c["externalIds"] or {}).get("ArXiv")
        if arxiv:
            names = ", ".join(a["name"] for a in c["authors"]) or "Anonymous"
            day = date.fromisoformat(c["publicationDate"])
            out.append(paper(arxiv, c["title"], names, day, None, c["abstract"] or "Abstract."))
    return out


@dataclass
class Site:
    data: DataDir
    engine: SearchEngine
    http: httpx.Client
    citers: list[str]  # arXiv ids of the recorded citers we hold


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    config = make_config(tmp_path)
    data = DataDir(config)
    papers = _papers()
    data.store.upsert(papers)
    data.sync_lexical()
    report = enrich_files(data, [S2_LINKS, OA_WORK])
    assert report.matched == 2 and report.graph_updated == 2
    engine = SearchEngine(data)
    citers = [p.arxiv_id for p in papers if p.arxiv_id.startswith("2405.")]
    with (
        serving(create_app(engine, config)) as url,
        httpx.Client(base_url=url, follow_redirects=True, timeout=60) as client,
    ):
        yield Site(data, engine, client, citers)
    engine.close()


def _docid(site: Site, arxiv_id: str) -> int:
    docid = site.data.store.docid_of(arxiv_id)
    assert docid is not None
    return docid


def _ids(site: Site, docids: list[int]) -> set[str]:
    return {p.arxiv_id for p in site.data.store.get(docids).values()}


def test_parsers_keep_the_recorded_links() -> None:
    s2 = parse_paper(_recorded())
    assert s2.references is not None and len(s2.references) == 14
    assert ("doi", "10.2307/2268810") in s2.references[6]  # "On Computable Numbers"
    assert s2.references[5] == ()  # S2 could not identify it: counted, never resolved
    assert s2.citers is not None and ("arxiv", "2405.19561") in s2.citers[0]
    oa = parse_work(json.loads(OA_WORK.read_text(encoding="utf-8")))
    assert oa.references is not None and len(oa.references) == 45
    assert oa.references[0] == (("openalex", "W1560783210"),)
    assert ("openalex", "W2741809807") in oa.keys and ("mag", "2741809807") in oa.keys
    nulls = parse_paper(
        json.loads(
            (HERE / "fixtures/enrich/s2_PaperWithNullValues.json").read_text(encoding="utf-8")
        )
    )
    assert nulls.references is None and nulls.citers is None  # null: the source did not say


def test_edges_resolve_and_both_directions_agree(site: Site) -> None:
    g = site.data.graph
    turing = _docid(site, TURING)
    assert _ids(site, g.references(turing)) == {"1802.00010", "1802.00011"}  # by DOI
    assert _ids(site, g.citations(turing)) == set(site.citers)  # by arXiv id
    assert len(site.citers) == 8
    every = [d for d in site.data.store.get(list(range(1, 40)))]
    for a in every:  # references(a) holds b exactly when citations(b) holds a
        for b in g.references(a):
            assert a in g.citations(b)
        for b in g.citations(a):
            assert a in g.references(b)
    counts = g.counts(turing)
    assert (counts.references, counts.references_here, counts.citations_here) == (14, 2, 8)
    oa = g.counts(_docid(site, OA))
    assert (oa.references, oa.references_here, oa.citations_here) == (45, 0, 0)  # all external


def test_openalex_ids_resolve_and_reenrichment_replaces(site: Site) -> None:
    """A work citing the recorded one by its OpenAlex id (a copy of the recorded work with
    another id, our Turing paper's DOI and that one reference: made here, not recorded)."""
    work = json.loads(OA_WORK.read_text(encoding="utf-8"))
    citing = copy.deepcopy(work)
    citing.update(
        id="https://openalex.org/W1",
        doi="https://doi.org/10.1093/mind/lix.236.433",
        referenced_works=["https://openalex.org/W2741809807"],
    )
    citing["ids"] = {"openalex": "https://openalex.org/W1"}
    turing, oa = _docid(site, TURING), _docid(site, OA)
    before = site.data.graph.generation
    apply_records(site.data.store, [parse_work(citing)], site.data.graph)
    assert site.data.graph.generation != before
    assert oa in site.data.graph.references(turing)
    assert turing in site.data.graph.citations(oa)
    # Re-enrichment from OpenAlex replaces OpenAlex's edges, and leaves Semantic Scholar's.
    citing["referenced_works"] = []
    report = apply_records(site.data.store, [parse_work(citing)], site.data.graph)
    assert report.graph_updated == 1
    assert oa not in site.data.graph.references(turing)
    assert len(site.data.graph.references(turing)) == 2
    same = apply_records(site.data.store, [parse_work(citing)], site.data.graph)
    assert same.graph_updated == 0  # nothing changed: no new generation


def test_edges_survive_a_new_version(site: Site) -> None:
    turing = _docid(site, TURING)
    old = site.data.store.get([turing])[turing]
    from dataclasses import replace

    site.data.store.upsert([replace(old, version=2, abstract="A new version.")])
    assert site.data.store.docid_of(TURING) == turing
    assert len(site.data.graph.citations(turing)) == 8


def test_cites_and_citedby_filters(site: Site) -> None:
    def ids(q: str, **kw: object) -> set[str]:
        r = site.engine.search(SearchRequest(query=q, page_size=50, **kw))  # type: ignore[arg-type]
        return {h.paper.arxiv_id for h in r.hits}

    assert ids(f"cites:{TURING}") == set(site.citers)
    assert ids(f"citedby:{TURING}") == {"1802.00010", "1802.00011"}
    assert ids(f"citedby:{TURING}v1 computable") == {"1802.00010"}  # with words
    assert ids(f"cites:{TURING} -turing") == {
        a
        for a in site.citers
        if "turing"
        not in json.dumps(
            [p.title + p.abstract for p in site.data.store.get([_docid(site, a)]).values()]
        ).lower()
    }
    assert ids(f"citedby:{OA}") == set()  # only external references
    r = site.engine.search(SearchRequest(query="cites:9999.99999"))
    assert r.total == 0 and any(w.startswith("cites:9999.99999: no paper") for w in r.warnings)
    r = site.engine.search(SearchRequest(query=f"citedby:{OA}"))
    assert (
        r.total == 0 and f"citedby:{OA}: it cites no paper here; nothing matches it" in r.warnings
    )


def test_cites_before_any_citation_data_says_so(engine: SearchEngine) -> None:
    """A corpus never enriched: ``cites:`` explains its empty answer and how to fill it."""
    paper = "2401.10241"
    r = engine.search(SearchRequest(query=f"cites:{paper}"))
    assert r.total == 0
    assert (
        f"cites:{paper}: no citation data yet (`papersift enrich` adds it); nothing matches it"
        in r.warnings
    )


def test_api_lists_and_paper_graph(site: Site) -> None:
    r = site.http.get(f"/api/v1/papers/{TURING}/citations", params={"page_size": 3})
    assert r.status_code == 200
    body = r.json()
    assert body["total"] == 8 and len(body["hits"]) == 3 and body["pages"] == 3
    dates = [h["paper"]["published"] for h in body["hits"]]
    assert dates == sorted(dates, reverse=True)  # newest first by default
    page2 = site.http.get(body["next"]).json()
    seen = {h["paper"]["id"] for h in body["hits"] + page2["hits"]}
    assert len(seen) == 6 and seen <= set(site.citers)
    refs = site.http.get(f"/api/v1/papers/{TURING}/references").json()
    assert {h["paper"]["id"] for h in refs["hits"]} == {"1802.00010", "1802.00011"}
    assert set(refs["hits"][0]) == {"paper", "score", "title_html", "snippet_html", "ranks", "why"}
    paper = site.http.get(f"/api/v1/papers/{TURING}").json()
    assert paper["graph"]["references"] == 14
    assert paper["graph"]["references_in_index"] == 2
    assert paper["graph"]["citations_in_index"] == 8
    assert site.http.get("/api/v1/papers/9999.99999/references").status_code == 404
    bad = site.http.get("/api/v1/papers/nonsense/citations")
    assert bad.status_code == 400 and bad.json()["error"]["parameter"] == "id"
    # A page past the last of a list that ends inside the result window is empty and says
    # so, as the search API answers; past the window itself it is a 400.
    past = site.http.get(f"/api/v1/papers/{TURING}/citations?page=999")
    assert past.status_code == 200 and past.json()["hits"] == []
    assert any("past the last page (1)" in w for w in past.json()["warnings"])
    assert site.http.get(f"/api/v1/papers/{TURING}/citations?page=1000000001").status_code == 400


def test_paper_page_sections(site: Site) -> None:
    doc = parse_html(site.http.get(f"/papers/{TURING}").text)
    cited = doc.cssselect("section.citations")[0]
    assert cited.cssselect("h2")[0].text_content() == "Cited by, in this index"
    assert len(cited.cssselect("li.hit")) == 5
    more = cited.cssselect("p.graph-more a")[0]
    assert more.text_content().startswith("All 8")
    listed = parse_html(site.http.get(more.get("href")).text)
    assert len(listed.cssselect("li.hit")) == 8
    exports = {a.text_content(): a.get("href") for a in cited.cssselect("p.export a")}
    csl = site.http.get(exports["CSL-JSON"]).json()
    assert sorted(i["number"] for i in csl) == sorted(site.citers)  # the whole list
    refs = doc.cssselect("section.references")[0]
    listed_ids = {s.text_content().removeprefix("arXiv:") for s in refs.cssselect(".arxiv-id")}
    assert listed_ids == {"1802.00010", "1802.00011"}
    # A citer S2 listed shows the paper among its references (the same edge, read back).
    citer = parse_html(site.http.get(f"/papers/{site.citers[0]}").text)
    back = citer.cssselect("section.references .arxiv-id")
    assert [s.text_content() for s in back] == [f"arXiv:{TURING}"]
    # A paper without edges has no such section at all; one with only external references
    # says how many there are.
    plain = parse_html(site.http.get(f"/papers/{LONE}").text)
    assert plain.cssselect("section.references, section.citations, p.graph-external") == []
    oa = parse_html(site.http.get(f"/papers/{OA}").text)
    assert oa.cssselect("section.references, section.citations") == []
    assert "45 references" in oa.cssselect("p.graph-external")[0].text_content()
