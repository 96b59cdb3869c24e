"""The paper page's neighbourhood graph, on the recorded Semantic Scholar and OpenAlex
responses of tests/test_graph.py, embedded by the real model, over HTTP against the real
app: the nodes are the papers the stored edges make neighbours (and, when those are few,
the nearest by exact cosine), every node links to a page that answers, the SVG is
well-formed XML with escaped labels that do not overlap, sized by citations and coloured by
year."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import httpx
import numpy as np
import pytest
from lxml import etree

from papersift.core.authors import parse_authors
from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.neighbourhood import FILL_TO, MAX_NODES, Neighbourhood, graph_neighbours
from papersift.engine.search import SearchEngine
from papersift.indexer.build import index_backlog
from papersift.indexer.enrich import apply_records
from papersift.indexer.enrich_run import enrich_files
from papersift.indexer.openalex import parse_work
from papersift.server.app import create_app
from papersift.server.neighbourhood_svg import YEAR_COLOURS, short
from papersift.server.svg import CHAR_WIDTH, FONT
from tests.corpus import make_config
from tests.test_graph import LONE, OA, OA_WORK, S2_LINKS, TURING, _papers
from tests.web_helpers import parse_html, serving

SVG = "{http://www.w3.org/2000/svg}"
COUPLED = "1802.00020"  # lists the recorded OpenAlex work's first 10 references
HOSTILE = "1802.00021"  # lists 5 of them; its title is markup
HOSTILE_TITLE = 'On <script>alert("x")</script> & the <b>graph</b> of citations'


@dataclass
class Site:
    data: DataDir
    engine: SearchEngine
    http: httpx.Client


def _copy_of_oa(work_id: str, doi: str, refs: int, cited_by: int) -> dict[str, object]:
    """The recorded OpenAlex work as another work (made here, not recorded) that lists its
    first ``refs`` references."""
    work = json.loads(OA_WORK.read_text(encoding="utf-8"))
    made = copy.deepcopy(work)
    made.update(
        id=f"https://openalex.org/{work_id}",
        doi=f"https://doi.org/{doi}",
        referenced_works=work["referenced_works"][:refs],
        cited_by_count=cited_by,
        authorships=[],
    )
    made["ids"] = {"openalex": f"https://openalex.org/{work_id}"}
    return made


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    config = make_config(tmp_path_factory.mktemp("hood"))
    data = DataDir(config)

    def paper(arxiv_id: str, title: str, day: date, doi: str) -> Paper:
        abstract = "We study how scholarly papers cite each other and what open access changes."
        authors = parse_authors("R. Graph")
        return Paper(arxiv_id, 1, title, abstract, authors, ("cs.DL",), day, day, doi=doi)

    extra = [
        paper(COUPLED, "Citation graphs of open access", date(2019, 5, 1), "10.9999/coupled"),
        paper(HOSTILE, HOSTILE_TITLE, date(2021, 7, 1), "10.9999/hostile"),
    ]
    data.store.upsert(_papers() + extra)
    data.sync_lexical()
    enrich_files(data, [S2_LINKS, OA_WORK])
    works = [
        _copy_of_oa("W90001", "10.9999/coupled", 10, 40),
        _copy_of_oa("W90002", "10.9999/hostile", 5, 3),
    ]
    report = apply_records(data.store, [parse_work(w) for w in works], data.graph)
    assert report.matched == 2
    data.sync_lexical()
    index_backlog(data)  # real vectors from the real model
    engine = SearchEngine(data)
    with (
        serving(create_app(engine, config)) as url,
        httpx.Client(base_url=url, timeout=60, follow_redirects=True) as client,
    ):
        yield Site(data, engine, client)
    engine.close()


def _docid(site: Site, arxiv_id: str) -> int:
    docid = site.data.store.docid_of(arxiv_id)
    assert docid is not None
    return docid


def _expected_graph(site: Site, docid: int) -> dict[int, tuple[int, int]]:
    """Coupling and co-citation from the stored, resolved edges, plus the recorded OpenAlex
    lists (shared OpenAlex ids of references), worked out here."""
    g = site.data.graph
    coupling: Counter[int] = Counter()
    for ref in g.references(docid):
        coupling.update(d for d in g.citations(ref) if d != docid)
    cocited: Counter[int] = Counter()
    for citer in g.citations(docid):
        cocited.update(d for d in g.references(citer) if d != docid)
    oa_refs = {
        OA: 45,
        COUPLED: 10,
        HOSTILE: 5,
    }  # each lists the first n of the recorded work's references
    me = site.data.store.get([docid])[docid].arxiv_id
    if me in oa_refs:
        for other, n in oa_refs.items():
            if other != me:
                coupling[_docid(site, other)] = max(
                    coupling[_docid(site, other)], min(n, oa_refs[me])
                )
    return {d: (coupling[d], cocited[d]) for d in set(coupling) | set(cocited)}


def _svg(page: str) -> etree._Element:
    """The neighbourhood SVG exactly as sent, parsed as strict XML."""
    match = re.search(r'<svg[^>]*class="neighbourhood".*?</svg>', page, re.S)
    assert match, "no neighbourhood graph on the page"
    return etree.fromstring(match.group(0).encode())


def test_graph_neighbours_are_the_stored_edges(site: Site) -> None:
    for arxiv_id in (TURING, OA, COUPLED, HOSTILE, "1802.00010", LONE):
        docid = _docid(site, arxiv_id)
        got = {d: v for d, v in graph_neighbours(site.data, docid).items()}
        assert got == _expected_graph(site, docid), arxiv_id
    assert graph_neighbours(site.data, _docid(site, OA))[_docid(site, COUPLED)] == (10, 0)


def test_thin_graph_is_topped_up_by_exact_cosine(site: Site) -> None:
    data = site.data
    for arxiv_id in (OA, "1802.00010"):
        docid = _docid(site, arxiv_id)
        hood = site.engine.neighbourhood(arxiv_id)
        assert hood is not None
        graph = _expected_graph(site, docid)
        linked = [n for n in hood.neighbours if n.by_graph]
        assert {_docid(site, n.paper.arxiv_id) for n in linked} == set(graph)
        strengths = [sum(graph[_docid(site, n.paper.arxiv_id)]) for n in linked]
        assert strengths == sorted(strengths, reverse=True)
        # The rest: the nearest others by exact cosine over the stored vectors.
        me = data.vectors.vector(docid)
        assert me is not None
        others = [
            (float(np.dot(me, v)), d)
            for d in sorted(data.store.all_text_hashes())
            if d != docid and d not in graph and (v := data.vectors.vector(d)) is not None
        ]
        want = [d for _, d in sorted(others, key=lambda p: (-p[0], p[1]))][: FILL_TO - len(graph)]
        filled = [n for n in hood.neighbours if not n.by_graph]
        assert [_docid(site, n.paper.arxiv_id) for n in filled] == want
        for n in filled:
            v = data.vectors.vector(_docid(site, n.paper.arxiv_id))
            assert n.similarity == pytest.approx(float(np.dot(me, v)), abs=1e-5)
        assert len(hood.neighbours) == min(MAX_NODES, FILL_TO)


def test_page_graph_links_parse_and_escape(site: Site) -> None:
    r = site.http.get(f"/papers/{OA}")
    assert r.status_code == 200
    doc = parse_html(r.text)
    (section,) = doc.cssselect("section.neighbourhood-section")
    assert "by similar text" in section.cssselect("p")[0].text_content()  # thin: it says so
    svg = _svg(r.text)
    assert svg.get("viewBox", "").startswith("0 0 ") and svg.get("width") is None
    assert svg.find(f"{SVG}title").text and svg.find(f"{SVG}desc").text
    hood = site.engine.neighbourhood(OA)
    assert hood is not None
    links = svg.findall(f".//{SVG}a")
    assert len(links) == len(hood.neighbours)
    labels = [a.find(f"{SVG}text").text for a in links]
    assert labels == [short(n.paper.title) for n in hood.neighbours]
    assert short(HOSTILE_TITLE) in labels  # the markup arrived as text
    assert not svg.findall(f".//{SVG}script") and not svg.findall(".//script")
    for a in links:  # every node is a link to a page that answers
        href = a.get("href")
        answer = site.http.get(href, follow_redirects=False)  # the canonical address
        assert answer.status_code == 200, href
    _labels_apart(svg)
    _sized_and_coloured(svg, hood)


def _labels_apart(svg: etree._Element) -> None:
    """Every label's box lies inside the drawing and overlaps no other label's box."""
    width = float(svg.get("viewBox").split()[2])
    boxes = []
    for t in svg.iter(f"{SVG}text"):
        if t.get("class") != "label":
            continue
        x, y, w = float(t.get("x")), float(t.get("y")), len(t.text) * CHAR_WIDTH
        left = x if t.get("text-anchor") == "start" else x - w
        boxes.append((left, y - FONT, left + w, y))
        assert left >= 0 and left + w <= width, t.text
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def _sized_and_coloured(svg: etree._Element, hood: Neighbourhood) -> None:
    neighbours = hood.neighbours
    circles = [a.find(f"{SVG}circle") for a in svg.findall(f".//{SVG}a")]
    radii = [
        (n.paper.citation_count or 0, float(c.get("r")))
        for n, c in zip(neighbours, circles, strict=True)
    ]
    for cites_a, r_a in radii:  # more citations, never a smaller circle
        for cites_b, r_b in radii:
            if cites_a > cites_b:
                assert r_a > r_b
    legend = svg.find(f".//{SVG}g[@class='legend']")
    spans = []
    for c, t in zip(legend.findall(f"{SVG}circle"), legend.findall(f"{SVG}text"), strict=True):
        lo, _, hi = t.text.partition("–")
        spans.append((int(lo), int(hi or lo), c.get("fill")))
    assert [s[2] for s in spans] == list(YEAR_COLOURS[: len(spans)])
    for n, c in zip(neighbours, circles, strict=True):
        year = n.paper.published.year
        (colour,) = [f for lo, hi, f in spans if lo <= year <= hi]
        assert c.get("fill") == colour


def test_hidden_without_a_citation_neighbour(site: Site) -> None:
    for arxiv_id in (TURING, LONE):  # Turing's references and citers share nothing else
        hood = site.engine.neighbourhood(arxiv_id)
        assert hood is not None and hood.neighbours == ()
        doc = parse_html(site.http.get(f"/papers/{arxiv_id}").text)
        assert doc.cssselect("section.neighbourhood-section, svg.neighbourhood") == []
    citer = next(a for a in site.data.store.ids_and_dois() if a[0].startswith("2405."))[0]
    hood = site.engine.neighbourhood(citer)
    assert hood is not None and hood.by_graph == 7  # the other citers of Turing
    assert all(n.coupling == 1 for n in hood.neighbours if n.by_graph)


def test_hub_works_count_for_nothing(site: Site) -> None:
    """A work more than ``fanout`` other papers link to relates nobody (and bounds the
    work a request does): the recorded work's first 5 references are listed by two other
    papers here, the next 5 by one; Turing is cited by 8 papers here."""
    oa = _docid(site, OA)
    assert graph_neighbours(site.data, oa, fanout=2)[_docid(site, COUPLED)] == (10, 0)
    hubless = graph_neighbours(site.data, oa, fanout=1)
    assert hubless[_docid(site, COUPLED)] == (5, 0)
    assert _docid(site, HOSTILE) not in hubless
    citer = next(a for a, _ in site.data.store.ids_and_dois() if a.startswith("2405."))
    assert len(graph_neighbours(site.data, _docid(site, citer), fanout=8)) == 7
    assert graph_neighbours(site.data, _docid(site, citer), fanout=7) == {}
