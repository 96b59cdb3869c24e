"""A query that names one paper by its DOI opens it, as an arXiv id does (``engine.direct``).

Real index (the session's demo sample) and the real app over HTTP.
"""

from __future__ import annotations

import httpx
import pytest

from papersift.core.paper import Paper
from papersift.engine.direct import doi_in
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine

pytest_plugins = ["tests.web_fixtures"]


def _with_doi(engine: SearchEngine) -> Paper:
    for page in range(1, 5):
        hits = engine.search(SearchRequest("", page_size=100, page=page)).hits
        for h in hits:
            if h.paper.doi:
                return h.paper
    raise AssertionError("no paper of the sample has a DOI")


def test_doi_forms() -> None:
    assert doi_in("10.1007/s11192-019-03151-7") == "10.1007/s11192-019-03151-7"
    assert doi_in(" https://doi.org/10.1007/S11192-019-03151-7 ") == "10.1007/s11192-019-03151-7"
    assert doi_in("doi:10.1103/PhysRevLett.116.061102.") == "10.1103/physrevlett.116.061102"
    assert doi_in("10.1007 citation analysis") is None and doi_in("graph 10.1/x") is None


@pytest.mark.parametrize("form", ["{doi}", "https://doi.org/{upper}", "doi: {upper}"])
def test_a_doi_opens_its_paper(engine: SearchEngine, form: str) -> None:
    paper = _with_doi(engine)
    assert paper.doi is not None
    query = form.format(doi=paper.doi, upper=paper.doi.upper())
    result = engine.search(SearchRequest(query))
    assert result.direct is not None and result.direct.arxiv_id == paper.arxiv_id
    assert [h.paper.arxiv_id for h in result.hits] == [paper.arxiv_id] and result.total == 1


def test_arxivs_own_doi_names_the_paper_by_its_id(engine: SearchEngine) -> None:
    paper = _with_doi(engine)
    result = engine.search(SearchRequest(f"10.48550/arXiv.{paper.arxiv_id}"))
    assert result.direct is not None and result.direct.arxiv_id == paper.arxiv_id


def test_an_absent_doi_says_so(engine: SearchEngine, http: httpx.Client) -> None:
    result = engine.search(SearchRequest("10.9999/no-such-paper.2026"))
    assert result.total == 0 and result.hits == () and result.direct is None
    assert result.warnings == (
        "no paper in this index has the DOI 10.9999/no-such-paper.2026 "
        "(https://doi.org/10.9999/no-such-paper.2026)",
    )
    body = http.get("/api/v1/search", params={"q": "10.9999/no-such-paper.2026"}).json()
    assert body["total"] == 0 and body["missing_id"] is None


def test_api_and_page(engine: SearchEngine, http: httpx.Client) -> None:
    paper = _with_doi(engine)
    body = http.get("/api/v1/search", params={"q": paper.doi}).json()
    assert body["direct"]["id"] == paper.arxiv_id and body["total"] == 1
    page = http.get("/search", params={"q": paper.doi})
    assert page.status_code == 200 and "That is the DOI of" in page.text


@pytest.mark.parametrize(
    ("form", "arxiv_id"),
    [
        ("arxiv.org/abs/2401.10241", "2401.10241"),  # copied from an address bar
        ("www.arxiv.org/pdf/2401.10241v1.pdf", "2401.10241"),
        ("CMP-LG/9405001", "cmp-lg/9405001"),  # arXiv writes the archive in lower case
        ("arXiv:Cmp-Lg/9405001V1", "cmp-lg/9405001"),
    ],
)
def test_an_id_in_any_form_opens_its_paper(engine: SearchEngine, form: str, arxiv_id: str) -> None:
    result = engine.search(SearchRequest(query=form))
    assert result.direct is not None and result.direct.arxiv_id == arxiv_id
    assert [h.paper.arxiv_id for h in result.hits] == [arxiv_id]
