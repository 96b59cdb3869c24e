"""Showing results for: a query no paper matches as typed answers its did-you-mean
suggestion when that matches, and says so (``SearchEngine._search``), on the result, in the
API, on the search page, in markdown and in the CLI; ``autocorrect=0`` searches it as typed.
Real index (the session's demo papers) and the real app over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

import lxml.html
import pytest
from lxml import etree
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine

pytest_plugins = ["tests.web_fixtures"]

TYPED, FIXED = "langauge translaton", "language translation"


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_the_results_are_the_suggestions_and_say_so(engine: SearchEngine, mode: str) -> None:
    request = SearchRequest(TYPED, mode=mode, sort="newest")  # type: ignore[arg-type]
    as_typed = engine.search(replace(request, autocorrect=False))
    assert as_typed.total == 0 and as_typed.suggestion == FIXED and as_typed.corrected is None
    assert any("no paper holds 'langauge', 'translaton'" in w for w in as_typed.warnings)

    result = engine.search(request)
    fixed = engine.search(replace(request, query=FIXED))
    assert fixed.total > 0 and fixed.corrected is None
    assert result.corrected == result.suggestion == FIXED
    assert result.request == request  # what was asked, for the page's links
    assert (result.total, result.mode, result.facets) == (fixed.total, fixed.mode, fixed.facets)
    assert [h.paper.arxiv_id for h in result.hits] == [h.paper.arxiv_id for h in fixed.hits]
    assert all("no paper holds" not in w for w in result.warnings)
    # Page 2 pages through the same list.
    two = engine.search(replace(request, page=2, page_size=5))
    assert [h.paper.arxiv_id for h in two.hits] == [h.paper.arxiv_id for h in fixed.hits[5:10]]


def test_nothing_matching_either_way_keeps_the_query_as_typed(engine: SearchEngine) -> None:
    """Filters that leave no paper of the suggestion's either: the answer is the typed
    query's (no results, its note, did you mean), not an empty list of another query."""
    none = Filters(categories=("astro-ph",))
    assert engine.search(SearchRequest(FIXED, mode="keyword", filters=none)).total == 0
    result = engine.search(SearchRequest(TYPED, mode="keyword", filters=none))
    assert result.total == 0 and result.corrected is None and result.suggestion == FIXED
    assert any("no paper holds" in w for w in result.warnings)
    # Nothing near: no suggestion, nothing to correct.
    far = engine.search(SearchRequest("xkqzvwp flurbish", mode="keyword"))
    assert far.total == 0 and far.suggestion is None and far.corrected is None


def test_the_page_says_showing_results_for(client: TestClient) -> None:
    q = TYPED + ' <b>"x&y"</b>'  # a phrase nothing holds: no results either way
    r = client.get("/search", params={"q": q, "mode": "keyword"})
    doc = lxml.html.document_fromstring(r.text)
    assert doc.find_class("did-you-mean")[0].text_content().startswith("Did you mean")
    assert "&lt;b&gt;" in r.text and not doc.find_class("result")

    r = client.get("/search", params={"q": TYPED, "mode": "keyword", "sort": "newest"})
    assert r.status_code == 200
    doc = lxml.html.document_fromstring(r.text)
    (note,) = doc.find_class("did-you-mean")
    text = " ".join(note.text_content().split())
    assert text.startswith(f"Showing results for {FIXED}: no paper matches “{TYPED}”.")
    (link,) = note.findall(".//a")
    assert link.text_content() == f"Search instead for {TYPED}"
    url = urlsplit(link.get("href"))
    assert parse_qs(url.query) == {
        "q": [TYPED], "mode": ["keyword"], "sort": ["newest"], "autocorrect": ["0"]
    }  # fmt: skip
    count = " ".join(doc.find_class("result-count")[0].text_content().split())
    total = client.get("/api/v1/search", params={"q": FIXED, "mode": "keyword"}).json()["total"]
    assert total > 0 and count.startswith(f"{total:,} paper")  # the suggestion's results
    # The feed follows what the page lists.
    follow = doc.xpath('//a[contains(., "Follow this search as a feed")]/@href')
    assert follow and parse_qs(urlsplit(follow[0]).query)["q"] == [FIXED]
    assert etree.fromstring(client.get(follow[0]).content).findall(".//item")
    # A feed is a standing query: as typed, never its suggestion's papers.
    typed_feed = client.get("/rss/search.xml", params={"q": TYPED, "mode": "keyword"})
    assert typed_feed.status_code == 200
    assert not etree.fromstring(typed_feed.content).findall(".//item")

    typed = lxml.html.document_fromstring(client.get(f"{url.path}?{url.query}").text)
    (note,) = typed.find_class("did-you-mean")
    assert note.text_content().startswith("Did you mean")
    link = note.findall(".//a")[0]
    assert parse_qs(urlsplit(link.get("href")).query)["q"] == [FIXED]
    assert "autocorrect" not in parse_qs(urlsplit(link.get("href")).query)


def test_the_api_and_markdown_say_it(client: TestClient) -> None:
    def get(**params: str) -> dict[str, object]:
        r = client.get("/api/v1/search", params={"q": TYPED, "mode": "keyword", **params})
        assert r.status_code == 200, r.text
        return dict(r.json())

    body = get()
    assert body["corrected"] == body["suggestion"] == FIXED and int(body["total"]) > 0  # type: ignore[call-overload]
    assert get(autocorrect="0") | {"took_ms": 0} == get(autocorrect="false") | {"took_ms": 0}
    off = get(autocorrect="0")
    assert off["corrected"] is None and off["total"] == 0 and off["suggestion"] == FIXED
    assert dict(off["request"])["autocorrect"] is False  # type: ignore[call-overload]
    assert dict(body["request"])["autocorrect"] is True  # type: ignore[call-overload]
    bad = client.get("/api/v1/search", params={"q": TYPED, "autocorrect": "maybe"})
    assert bad.status_code == 400 and "autocorrect" in bad.text
    spec = client.get("/openapi.json").json()
    props = spec["components"]["schemas"]["SearchResponse"]["properties"]
    assert "autocorrect=0" in props["corrected"]["description"]
    names = [p["name"] for p in spec["paths"]["/api/v1/search"]["get"]["parameters"]]
    assert "autocorrect" in names

    md = client.get("/search", params={"q": TYPED, "mode": "keyword"},
                    headers={"Accept": "text/markdown"}).text  # fmt: skip
    assert f"> Showing results for {FIXED}: no paper matches the query as typed." in md
    assert "autocorrect=0" in md and "Did you mean" not in md


@pytest.mark.slow
def test_the_cli_says_it_and_can_search_as_typed(built_config: Config) -> None:
    config = str(built_config.base_dir / "config.toml")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "papersift", "search", "--config", config, "--mode",
                "keyword", *args, TYPED]  # fmt: skip
        out = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return out

    lines = run().stdout.splitlines()
    assert lines[0] == (f"showing results for: {FIXED} (no paper matches the query as typed; "
                        "--no-autocorrect searches it)")  # fmt: skip
    assert not lines[1].startswith("0 results")
    typed = run("--no-autocorrect").stdout.splitlines()
    assert typed[0] == f"did you mean: {FIXED}" and typed[1].startswith("0 results (keyword, ")
    body = json.loads(run("--json").stdout)
    assert body["corrected"] == FIXED and body["total"] > 0
