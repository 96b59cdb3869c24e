"""A query that is a list of paper identifiers lists those papers (``engine.id_list``).

Real index (the session's demo sample), the real app over HTTP and the CLI as a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from papersift.core.config import Config
from papersift.core.paper import Paper
from papersift.engine.direct import PaperId
from papersift.engine.id_list import MAX_IDS, ids_in
from papersift.engine.results import Filters, SearchRequest, SearchResult
from papersift.engine.search import SearchEngine

pytest_plugins = ["tests.web_fixtures"]

ABSENT_ARXIV = "2401.99999"
ABSENT_DOI = "10.9999/no-such-paper.2026"


@pytest.fixture(scope="module")
def papers(engine: SearchEngine) -> list[Paper]:
    """Every paper of the sample, newest first."""
    out: list[Paper] = []
    for page in range(1, 5):
        out += [h.paper for h in engine.search(SearchRequest("", page_size=100, page=page)).hits]
    assert len(out) > MAX_IDS + 5
    return out


def _ids(result: SearchResult) -> list[str]:
    return [h.paper.arxiv_id for h in result.hits]


def _doi_paper(papers: list[Paper]) -> Paper:
    return next(p for p in papers if p.doi and "10.48550" not in p.doi)


def _old_style(papers: list[Paper]) -> Paper:
    return next(p for p in papers if "/" in p.arxiv_id)


def test_ids_in_reads_the_forms_a_single_id_is_read_in() -> None:
    a, b = PaperId("arxiv", "2401.10241"), PaperId("arxiv", "hep-th/9901001")
    doi = PaperId("doi", "10.1103/physrevlett.116.061102")
    assert ids_in("2401.10241 hep-th/9901001v2") == [a, b]
    assert ids_in("arXiv:2401.10241, arXiv: hep-th/9901001;") == [a, b]
    assert ids_in("https://arxiv.org/abs/2401.10241v3\nhttps://arxiv.org/pdf/hep-th/9901001") == [
        a,
        b,
    ]
    assert ids_in(
        "doi: 10.1103/PhysRevLett.116.061102.\n  https://doi.org/10.48550/arXiv.2401.10241"
    ) == [
        doi,
        a,
    ]
    assert ids_in("2401.10241;hep-th/9901001,2401.10241v2") == [a, b]  # each once
    # A DOI holding a semicolon is read whole when its parts are no ids.
    sici = "10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-0"
    assert ids_in(f"{sici} 2401.10241") == [PaperId("doi", sici), a]


NO_LISTS = (
    "2401.10241", "2401.10241 transformers", "attention 2401.10241 2402.02447",
    "2401.10241 10.1007", "", " , ; ",
)  # fmt: skip


@pytest.mark.parametrize("query", NO_LISTS)
def test_a_word_or_a_single_id_is_no_list(query: str) -> None:
    assert ids_in(query) is None


def test_found_papers_in_the_order_given_and_the_missing_named(
    engine: SearchEngine, papers: list[Paper]
) -> None:
    doi_paper, old = _doi_paper(papers), _old_style(papers)
    new = next(p for p in papers if "/" not in p.arxiv_id and p is not doi_paper)
    assert doi_paper.doi is not None
    query = (
        f"arXiv:{new.arxiv_id}v1, {ABSENT_ARXIV}\nhttps://doi.org/{doi_paper.doi.upper()}; "
        f"doi:{ABSENT_DOI} {old.arxiv_id} {new.arxiv_id}"
    )
    result = engine.search(SearchRequest(query))
    assert _ids(result) == [new.arxiv_id, doi_paper.arxiv_id, old.arxiv_id]
    assert result.total == 3 and result.direct is None and result.missing_id is None
    assert result.warnings == (
        f"2 of 5 ids are not in this index: arXiv:{ABSENT_ARXIV} "
        f"(https://arxiv.org/abs/{ABSENT_ARXIV}), doi:{ABSENT_DOI} (https://doi.org/{ABSENT_DOI})",
    )
    listed = (new, doi_paper, old)
    years = {str(p.published.year) for p in listed}
    assert {f.value: f.count for f in result.facets["years"]} == {
        y: sum(str(p.published.year) == y for p in listed) for y in years
    }
    categories = {f.value: f.count for f in result.facets["categories"]}
    assert categories == {c: sum(c in p.categories for p in listed) for c in categories}
    assert set(categories) == {c for p in listed for c in p.categories}


def test_a_doi_and_the_id_of_one_paper_list_it_once(
    engine: SearchEngine, papers: list[Paper]
) -> None:
    paper, other = _doi_paper(papers), papers[0]
    result = engine.search(
        SearchRequest(
            f"{paper.doi} {other.arxiv_id} {paper.arxiv_id} 10.48550/arXiv.{other.arxiv_id}"
        )
    )
    assert _ids(result) == [paper.arxiv_id, other.arxiv_id] and result.total == 2
    assert result.warnings == ()


def test_none_found(engine: SearchEngine) -> None:
    result = engine.search(SearchRequest(f"{ABSENT_ARXIV} {ABSENT_DOI}"))
    assert result.total == 0 and result.hits == ()
    assert result.warnings[0].startswith("2 of 2 ids are not in this index: arXiv:2401.99999")


def test_a_word_makes_it_an_ordinary_search(engine: SearchEngine, papers: list[Paper]) -> None:
    ids = " ".join(p.arxiv_id for p in papers[:3])
    assert _ids(engine.search(SearchRequest(ids))) == [p.arxiv_id for p in papers[:3]]
    result = engine.search(SearchRequest(f"{ids} language"))
    # The ids are searched as words, which no paper holds (the ordinary search's note; not
    # "check the spelling": an id has no letters to misspell, review of session 37).
    held_by_none = f"no paper in this index holds {', '.join(repr(p.arxiv_id) for p in papers[:3])}"
    assert result.total != 3 and held_by_none in result.warnings
    assert not any("check the spelling" in w or "ids are" in w for w in result.warnings)


def test_over_the_cap_a_note_and_the_first_ones(engine: SearchEngine, papers: list[Paper]) -> None:
    chosen = papers[: MAX_IDS + 5]
    result = engine.search(SearchRequest(", ".join(p.arxiv_id for p in chosen), page_size=100))
    assert result.total == MAX_IDS and _ids(result) == [p.arxiv_id for p in chosen[:MAX_IDS]]
    assert result.warnings == (
        f"the query names {MAX_IDS + 5} ids: only the first {MAX_IDS} are looked up",
    )


def test_pages(engine: SearchEngine, papers: list[Paper]) -> None:
    chosen = [p.arxiv_id for p in papers[10:15]]
    query = " ".join(chosen)
    second = engine.search(SearchRequest(query, page=2, page_size=2))
    assert _ids(second) == chosen[2:4] and second.total == 5 and second.pages == 3
    assert _ids(engine.search(SearchRequest(query, page=3, page_size=2))) == chosen[4:]
    assert engine.search(SearchRequest(query, page=4, page_size=2)).hits == ()


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_a_sort_orders_the_listed_papers(
    engine: SearchEngine, papers: list[Paper], sort: str
) -> None:
    # Scattered through the sample (newest first), given in no date order.
    chosen = [papers[i] for i in (40, 3, 250, 120, 7, 300)]
    result = engine.search(SearchRequest(" ".join(p.arxiv_id for p in chosen), sort=sort))  # type: ignore[arg-type]
    expected = sorted(chosen, key=lambda p: p.published, reverse=sort == "newest")
    assert _ids(result) == [p.arxiv_id for p in expected] != [p.arxiv_id for p in chosen]


def test_filters_apply_and_say_what_they_hide(engine: SearchEngine, papers: list[Paper]) -> None:
    in_cl = [p for p in papers if "cs.CL" in p.categories][:2]
    others = [p for p in papers if "cs.CL" not in p.categories][:2]
    chosen = [others[0], in_cl[0], others[1], in_cl[1]]
    query = " ".join(p.arxiv_id for p in chosen)
    result = engine.search(SearchRequest(query, filters=Filters(categories=("cs.cl",))))
    assert _ids(result) == [p.arxiv_id for p in in_cl] and result.total == 2
    assert result.warnings == ("the filters hide 2 of the 4 listed papers",)
    newest = max(p.published for p in chosen)
    dated = engine.search(SearchRequest(query, filters=Filters(date_from=newest)))
    assert _ids(dated) == [p.arxiv_id for p in chosen if p.published >= newest]


def test_api_and_page_over_http(http: httpx.Client, papers: list[Paper]) -> None:
    chosen = papers[20:23]
    query = ", ".join(f"arXiv:{p.arxiv_id}" for p in chosen) + f", arXiv:{ABSENT_ARXIV}"
    body = http.get("/api/v1/search", params={"q": query, "page": 2, "page_size": 2}).json()
    assert [h["paper"]["id"] for h in body["hits"]] == [chosen[2].arxiv_id] and body["total"] == 3
    assert body["direct"] is None and body["missing_id"] is None
    assert body["warnings"] == [
        f"1 of 4 ids is not in this index: arXiv:{ABSENT_ARXIV} "
        f"(https://arxiv.org/abs/{ABSENT_ARXIV})"
    ]
    page = http.get("/search", params={"q": query})
    assert page.status_code == 200 and "3 papers" in page.text
    assert "That is the arXiv id" not in page.text
    at = [page.text.index(f"/papers/{p.arxiv_id}") for p in chosen]
    assert at == sorted(at) and f"arXiv:{ABSENT_ARXIV} (https://arxiv.org/abs/" in page.text
    # One id alone still opens its paper.
    single = http.get("/search", params={"q": chosen[0].arxiv_id})
    assert "That is the arXiv id of" in single.text
    feed = http.get("/rss/search.xml", params={"q": query})
    assert feed.status_code == 200
    assert sum(f"/papers/{p.arxiv_id}" in feed.text for p in chosen) == 3


@pytest.mark.slow
def test_cli(built_config: Config, papers: list[Paper]) -> None:
    chosen = [p.arxiv_id for p in papers[30:33]]
    out = subprocess.run(
        [sys.executable, "-m", "papersift", "search", "--config",
         str(built_config.base_dir / "config.toml"), "--json", "\n".join([*chosen, ABSENT_DOI])],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [h["id"] for h in data["hits"]] == chosen and data["total"] == 3
    assert data["warnings"] == [
        f"1 of 4 ids is not in this index: doi:{ABSENT_DOI} (https://doi.org/{ABSENT_DOI})"
    ]
