"""Exports of result lists: each format parses back with its own library into the papers it
was made from; the export route over HTTP covers a search, a researcher's papers and the
page links, with clear 400s."""

from __future__ import annotations

import json
from dataclasses import replace

import bibtexparser
import httpx
import pytest
import rispy

from papersift.core.paper import Paper
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.feeds.export import EXPORT_FORMATS, balanced, render_export, tex_field
from papersift.server.meta import bibtex
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]


def _papers(engine: SearchEngine) -> list[Paper]:
    got = engine.data.store.get(list(range(1, 400)))
    return [got[d] for d in sorted(got)]


def test_bibtex_parses_back(engine: SearchEngine) -> None:
    papers = _papers(engine)
    twin = replace(papers[0], arxiv_id="9999.00001")  # same key: gets a suffix
    text, media, ext = render_export([*papers, twin], "bibtex")
    assert (media.split(";")[0], ext) == ("application/x-bibtex", "bib")
    lib = bibtexparser.parse_string(text)
    assert lib.failed_blocks == []
    assert len(lib.entries) == len(papers) + 1
    assert len({e.key for e in lib.entries}) == len(lib.entries)
    for p, e in zip(papers, lib.entries, strict=False):
        f = {k: v.value for k, v in e.fields_dict.items()}
        assert f["eprint"] == p.arxiv_id and f["archivePrefix"] == "arXiv"
        assert f["title"] == "{" + tex_field(p.title) + "}"
        assert f["author"].count(" and ") == max(0, len(p.authors) - 1)
        assert f["year"] == str(p.published.year)


def test_balanced_braces() -> None:
    assert balanced("a } b { c") == "a  b { c}"
    assert balanced("ends in \\") == "ends in "


def test_tex_specials_are_escaped(engine: SearchEngine) -> None:
    """A bare ``&``, ``%`` or ``#`` in a title (real arXiv titles have them: "Arts &
    Humanities") broke LaTeX on the entry; an escaped one stays as it is. The paper page's
    ``.bib`` and the export write the same fields."""
    assert tex_field("Arts & Humanities, 50% of #1, R\\&D") == (
        "Arts \\& Humanities, 50\\% of \\#1, R\\&D"
    )
    paper = replace(_papers(engine)[0], title="Arts & Humanities at 5%", journal_ref="J. A&B 3")
    lib = bibtexparser.parse_string(render_export([paper], "bibtex")[0])
    fields = {k: v.value for k, v in lib.entries[0].fields_dict.items()}
    assert fields["title"] == "{Arts \\& Humanities at 5\\%}"
    assert fields["note"] == "J. A\\&B 3"
    page = bibtexparser.parse_string(bibtex(paper)).entries[0]
    assert {k: v.value for k, v in page.fields_dict.items()} == fields


def test_ris_parses_back(engine: SearchEngine) -> None:
    papers = _papers(engine)
    text, _, ext = render_export(papers, "ris")
    assert ext == "ris" and not text.startswith("1.")
    records = rispy.loads(text)
    assert len(records) == len(papers)
    for p, r in zip(papers, records, strict=True):
        assert r["id"] == f"arXiv:{p.arxiv_id}"
        assert r["title"] == " ".join(p.title.split())
        assert len(r["authors"]) == len(p.authors)
        assert r["year"] == str(p.published.year)
        assert r.get("doi") == p.doi


def test_csl_json_parses_back(engine: SearchEngine) -> None:
    papers = _papers(engine)
    text, media, _ = render_export(papers, "csl-json")
    assert media.startswith("application/vnd.citationstyles.csl+json")
    items = json.loads(text)
    assert [i["id"] for i in items] == [f"arXiv:{p.arxiv_id}" for p in papers]
    assert all(i["type"] == "article" and i["issued"]["date-parts"][0][0] for i in items)
    with pytest.raises(ValueError, match="unknown export format"):
        render_export(papers, "endnote")


@pytest.mark.parametrize("fmt", list(EXPORT_FORMATS))
def test_export_route_matches_the_search(
    engine: SearchEngine, http: httpx.Client, fmt: str
) -> None:
    req = SearchRequest(query="language model", mode="keyword", page_size=100)
    first = engine.search(req)
    want = [h.paper.arxiv_id for p in range(1, first.pages + 1)
            for h in engine.search(replace(req, page=p)).hits]  # fmt: skip
    assert first.total == len(want) > 100  # more than one page of the search
    r = http.get("/api/v1/export", params={"format": fmt, "q": "language model",
                                          "mode": "keyword"})  # fmt: skip
    assert r.status_code == 200
    assert "attachment" in r.headers["content-disposition"]
    if fmt == "bibtex":
        got = [e.fields_dict["eprint"].value for e in bibtexparser.parse_string(r.text).entries]
    elif fmt == "ris":
        got = [x["id"].removeprefix("arXiv:") for x in rispy.loads(r.text)]
    else:
        got = [x["number"] for x in json.loads(r.text)]
    assert got == want and len(got) > 1


def test_export_limit_and_errors(http: httpx.Client) -> None:
    r = http.get("/api/v1/export", params={"format": "csl-json", "limit": 3})
    assert r.status_code == 200 and len(json.loads(r.text)) == 3
    # Any case, as the page's links name the formats ("BibTeX" was "Give one 'format'").
    r = http.get("/api/v1/export", params={"format": "BibTeX", "limit": 2})
    assert r.status_code == 200 and len(bibtexparser.parse_string(r.text).entries) == 2
    for params, parameter in (
        ({"format": "doc"}, "format"),
        ({}, "format"),
        ({"format": "ris", "limit": 1001}, "limit"),
        ({"format": "ris", "page": 2}, "page"),
        ({"format": "ris", "colour": "red"}, "colour"),
        ({"format": ["ris", "RIS"]}, "format"),
        ({"format": "ris", "limit": [3, 4]}, "limit"),
    ):
        bad = http.get("/api/v1/export", params=params)
        assert bad.status_code == 400, params
        assert bad.json()["error"]["parameter"] == parameter


def test_pages_link_their_exports(engine: SearchEngine, http: httpx.Client) -> None:
    doc = parse_html(http.get("/search", params={"q": "language model", "mode": "keyword"}).text)
    links = {a.text_content(): a.get("href") for a in doc.cssselect("p.export a")}
    assert set(links) == {"BibTeX", "RIS", "CSL-JSON"}
    total = engine.search(SearchRequest(query="language model", mode="keyword")).total
    items = json.loads(http.get(links["CSL-JSON"]).text)
    assert len(items) == min(total, 1000)
    found, _ = engine.people.search("bornmann", 1)
    who = found[0]
    rdoc = parse_html(http.get(f"/researchers/{who.rid}", follow_redirects=True).text)
    ris = [a.get("href") for a in rdoc.cssselect("p.export a") if a.text_content() == "RIS"]
    records = rispy.loads(http.get(ris[0]).text)
    assert len(records) == who.papers
