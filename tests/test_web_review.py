"""What a second demo review found, over the real app and index served by uvicorn: lists the
result window cuts short say so, every year facet can be clicked, the window's 400 and the
last page agree, mode and sort in any case, the similar API's messages, markdown."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from papersift.core.config import Config
from papersift.core.urls import researcher_url
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.web_helpers import parse_html, serving

pytest_plugins = ["tests.web_fixtures"]

WINDOW = 100  # the result window of ``narrow``: smaller than the session index


@pytest.fixture(scope="module")
def narrow(engine: SearchEngine, built_config: Config) -> Iterator[httpx.Client]:
    """The app over the session index with a result window of 100 results, served."""
    config = replace(built_config, search=replace(built_config.search, max_window=WINDOW))
    with (
        serving(create_app(engine, config)) as url,
        httpx.Client(base_url=url, timeout=60) as c,
    ):
        yield c


def page(c: httpx.Client, url: str, status: int = 200) -> Any:
    r = c.get(url)
    assert r.status_code == status, (url, r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("text/html")
    return parse_html(r.text)


def text_of(doc: Any, selector: str) -> str:
    return " ".join(" ".join(n.text_content().split()) for n in doc.cssselect(selector))


def query_of(href: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(href).query)


def published(doc: Any) -> list[str]:
    """The first-version dates of a result page's hits, as the API gives them."""
    return [t.get("datetime") for t in doc.cssselect(".hit .hit-meta time")]


# --- 1. a list the result window cuts short says so, and how to reach the rest ---------------


def test_last_reachable_page_says_the_rest_cannot_be_paged(narrow: httpx.Client) -> None:
    first = narrow.get("/api/v1/search").json()  # browsing: every paper, newest first
    total, last, size = first["total"], first["pages"], first["page_size"]
    shown = last * size
    assert total > WINDOW >= shown and first["reachable"] == shown
    assert not any("paged through" in w for w in first["warnings"])  # said on the last page
    doc = page(narrow, f"/search?page={last}")
    assert f"page {last} of {last} (pages reach the first {shown})" in text_of(doc, ".result-count")
    note = text_of(doc, ".results .window-note")
    assert f"Showing the first {shown} of {total:,}: only these can be paged through" in note
    links = {a.text_content(): a.get("href") for a in doc.cssselect(".results .window-note a")}
    assert query_of(links["sort oldest first"]) == {"sort": ["oldest"]}
    assert page(narrow, links["sort oldest first"]).cssselect(".hit")
    # The last page's last paper: the link continues the list from its day, which comes
    # again (dates filter inclusively), so nothing between is lost.
    day = published(doc)[-1]
    (cont,) = [href for label, href in links.items() if label.startswith("Continue")]
    assert query_of(cont) == {"to": [day]}
    more = narrow.get("/api/v1/search", params={"to": day}).json()
    assert more["hits"][0]["paper"]["published"] == day
    assert total - shown <= more["total"] < total
    # The API says the same on its last page, with the parameter that continues the list.
    api = narrow.get("/api/v1/search", params={"page": last}).json()
    assert api["next"] is None and api["reachable"] == shown
    (warning,) = [w for w in api["warnings"] if "paged through" in w]
    assert f"only the first {shown} of {total:,} results" in warning and f"to={day}" in warning
    # ... and that the day comes again: its papers on this page are listed once more.
    assert "from this page's last day; that day's papers on this page come again" in warning
    again = {h["paper"]["id"] for h in more["hits"]} & {h["paper"]["id"] for h in api["hits"]}
    assert again, "the day's papers of the last page open the continued list"


def test_every_page_of_a_cut_list_says_so_and_oldest_first_continues(
    narrow: httpx.Client,
) -> None:
    doc = page(narrow, "/search?page=2")
    note = text_of(doc, ".results .window-note")
    assert "only these can be paged through" in note and "Continue" not in note
    last = narrow.get("/api/v1/search?sort=oldest").json()["pages"]
    doc = page(narrow, f"/search?sort=oldest&page={last}")
    links = {a.text_content(): a.get("href") for a in doc.cssselect(".results .window-note a")}
    assert query_of(links["sort newest first"]) == {}  # newest is browsing's default
    (cont,) = [href for label, href in links.items() if label.startswith("Continue")]
    assert query_of(cont) == {"from": [published(doc)[-1]], "sort": ["oldest"]}
    # A search its pages hold whole has no note, and its ``reachable`` is its total.
    body = narrow.get("/api/v1/search", params={"q": "pipeline parallelism"}).json()
    assert body["reachable"] == body["total"] <= WINDOW
    assert not page(narrow, "/search?q=pipeline+parallelism").cssselect(".window-note")


def test_category_page_past_the_window_says_so(narrow: httpx.Client, engine: SearchEngine) -> None:
    top = engine.stats().categories[0]
    assert top.count > WINDOW
    last = WINDOW // 24
    doc = page(narrow, f"/categories/{top.value}?page={last}")
    assert f"of {top.count:,}: only these can be paged through" in text_of(doc, ".window-note")
    (cont,) = [a for a in doc.cssselect(".window-note a") if "Continue" in a.text_content()]
    assert query_of(cont.get("href"))["category"] == [top.value]


def test_researcher_page_links_the_rest_to_itself(
    engine: SearchEngine, built_config: Config
) -> None:
    found, _ = engine.people.search("", 1, 0)  # the researcher with the most papers
    top = found[0]
    assert top.papers > 3
    tiny = replace(built_config, search=replace(built_config.search, max_window=3))
    url = researcher_url(top.rid, top.name)
    with serving(create_app(engine, tiny)) as root, httpx.Client(base_url=root) as c:
        doc = page(c, f"{url}?page_size=1&page=3")
        note = text_of(doc, ".window-note")
        assert f"Showing the first 3 of {top.papers}" in note
        for a in doc.cssselect(".window-note a"):  # on this page, not the search page
            assert urlsplit(a.get("href")).path == url
            assert page(c, a.get("href")).cssselect(".hit")


# --- 2. every year (and category) the search counted can be clicked ------------------------


def test_every_year_facet_can_be_clicked(narrow: httpx.Client) -> None:
    years = narrow.get("/api/v1/search").json()["facets"]["years"]
    assert len(years) > 15  # the session index spans more years than the page shows at first
    doc = page(narrow, "/search")
    (section,) = [s for s in doc.cssselect(".facets section") if text_of(s, "h2") == "Year"]
    shown = [a.text_content().strip() for a in section.cssselect(":scope > ul a")]
    (more,) = section.cssselect(":scope > details.facet-more")  # plain HTML, no script
    assert more.get("open") is None
    assert text_of(more, "summary") == f"{len(years) - 15} more years"
    folded = {a.text_content().strip(): a.get("href") for a in more.cssselect("ul a")}
    assert shown + list(folded) == [y["value"] for y in years] and len(shown) == 15
    oldest = years[-1]
    chosen = narrow.get("/api/v1/search?" + urlsplit(folded[oldest["value"]]).query).json()
    assert chosen["total"] == oldest["count"]
    assert {h["paper"]["published"][:4] for h in chosen["hits"]} == {oldest["value"]}
    cats = narrow.get("/api/v1/search").json()["facets"]["categories"]
    doc_cats = [s for s in doc.cssselect(".facets section") if text_of(s, "h2") == "Categories"]
    assert len(doc_cats[0].cssselect("a")) == len(cats)


# --- 3. the window's 400 and the page past the last one agree -------------------------------

SHORT = "q=parsing&mode=keyword&page_size=5"  # fewer results than the window holds


def test_window_error_names_the_window_and_past_the_end_the_last_page(
    narrow: httpx.Client,
) -> None:
    first = narrow.get(f"/api/v1/search?{SHORT}").json()
    last, reach = first["pages"], WINDOW // 5  # the list's last page, the window's
    assert 1 < last < reach and first["total"] <= WINDOW
    # Inside the window or past it, after the list's end: its last page, as the page says.
    for past in (last + 1, reach, reach + 1):
        r = narrow.get(f"/api/v1/search?{SHORT}&page={past}")
        assert r.status_code == 200 and r.json()["hits"] == []
        assert f"page {past} is past the last page ({last})" in r.json()["warnings"]
    # A list that runs on past the window: the API's 400 counts what the pages reach.
    r = narrow.get(f"/api/v1/search?page_size=5&page={reach + 1}")
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        f"Page {reach + 1} is past the result window: with 5 per page at most {reach} pages "
        f"can be reached (the first {WINDOW} results)."
    )
    # The page says the same past the window: the list's last page, and a link to it.
    doc = page(narrow, f"/search?{SHORT}&page={reach + 1}")
    assert f"page {reach + 1} is past the last page ({last})" in text_of(doc, ".past-last")
    links = {a.text_content(): a.get("href") for a in doc.cssselect(".past-last a")}
    assert query_of(links[f"Go to the last page ({last})"])["page"] == [str(last)]
    # A list that runs on past the window: the page is the window's 400, worded as the API's.
    doc = page(narrow, f"/search?page_size=5&page={reach + 1}", status=400)
    assert f"with 5 per page at most {reach} pages can be reached" in text_of(doc, "main")


# --- 4. mode and sort in any case, as categories -------------------------------------------


def test_mode_and_sort_in_any_case(narrow: httpx.Client) -> None:
    want = narrow.get("/api/v1/search?q=parsing&mode=keyword&sort=oldest&category=cs.CL").json()
    r = narrow.get("/api/v1/search?q=parsing&mode=KEYWORD&sort=Oldest&category=CS.CL")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["request"] == want["request"] and body["mode"] == "keyword"
    assert body["hits"] and body["hits"] == want["hits"]
    doc = page(narrow, "/search?q=parsing&mode=Keyword&sort=OLDEST")
    current = [a.text_content() for a in doc.cssselect(".switch a[aria-current]")]
    assert current == ["Keyword", "Oldest"]
    # Links from the page carry the values as the API names them.
    assert all("KEYWORD" not in a.get("href") for a in doc.cssselect(".pager a"))
    assert page(narrow, "/categories/cs.CL?sort=OLDEST").cssselect(".hit")
    for bad in ("mode=keywords", "sort=NEWER"):
        r = narrow.get(f"/api/v1/search?q=parsing&{bad}")
        name, value = bad.split("=")
        assert r.status_code == 400 and r.json()["error"]["parameter"] == name
        assert r.json()["error"]["message"].startswith(f"Unknown {name} '{value}'; use one of:")


# --- 5. the similar API words its errors as search does ------------------------------------

KNOWN = "text, page, page_size, category, researcher, from, to"
SIZES = "'page_size' must be a whole number from 1 to 100"  # the session config's maximum


@pytest.mark.parametrize(
    ("body", "parameter", "message"),
    [
        ({"page_size": 500}, "page_size", f"{SIZES}, not 500."),
        ({"page_size": 0}, "page_size", f"{SIZES}, not 0."),
        ({"page": "2"}, "page", f"'page' must be a whole number from 1 to {WINDOW}, not '2'."),
        ({"page": True}, "page", f"'page' must be a whole number from 1 to {WINDOW}, not true."),
        ({"mode": "keyword"}, "mode", f"Unknown field 'mode'; known: {KNOWN}."),
        ({"from": "May 2024"}, "from", "'from' must be a date such as 2024, 2024-05 or "
         "2024-05-17, not 'May 2024'."),
        ({"category": "cs.IR"}, "category", "'category' must be a list of at most 20 "
         "categories such as cs.IR or cs, not 'cs.IR'."),
        ({"text": 5}, "text", "'text' must be a string of 1 to 20,000 characters (an abstract "
         "or a paragraph), not 5."),
    ],
)  # fmt: skip
def test_similar_errors_read_as_search_errors(
    narrow: httpx.Client, body: dict[str, Any], parameter: str, message: str
) -> None:
    r = narrow.post("/api/v1/similar", json={"text": "graph neural networks", **body})
    assert r.status_code == 400
    assert r.json()["error"] == {
        "status": 400,
        "code": "bad_request",
        "message": message,
        "parameter": parameter,
    }
    # The search endpoint words the same fault the same way.
    if parameter in ("page_size", "from"):  # a query string's values are all strings
        sent = body[parameter]
        search = narrow.get("/api/v1/search", params={parameter: sent}).json()
        assert search["error"]["message"] == message.replace(f"not {sent}.", f"not '{sent}'.")


def test_similar_without_text_names_the_field(narrow: httpx.Client) -> None:
    r = narrow.post("/api/v1/similar", json={"page": 1})
    assert r.json()["error"]["parameter"] == "text"
    assert r.json()["error"]["message"].startswith("'text' is required: a string of 1 to ")
    r = narrow.post("/api/v1/similar", json=["graph neural networks"])
    assert r.status_code == 400 and KNOWN in r.json()["error"]["message"]


# --- 6. markdown from every page, as the developers page and llms.txt promise ---------------

MD = {"Accept": "text/markdown"}


def test_every_page_answers_markdown(narrow: httpx.Client) -> None:
    guide = narrow.get("/llms.txt").text
    promise = text_of(page(narrow, "/developers"), "#markdown + p")
    assert promise.startswith("Ask any page for text/markdown and you get markdown")
    assert "Send `Accept: text/markdown` to any page URL" in guide
    for url in ("/feeds", "/similar", "/similar?text=hello", "/signin"):
        r = narrow.get(url, headers=MD)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
        assert r.text == guide and "Accept" in r.headers["vary"], url
        # A browser still gets the page.
        assert narrow.get(url).headers["content-type"].startswith("text/html")
    # A posted form is answered as a form, whatever the Accept header.
    r = narrow.post("/similar", data={"text": "graph neural networks"}, headers=MD)
    assert r.headers["content-type"].startswith("text/html")


def test_markdown_search_says_what_the_window_cuts(narrow: httpx.Client) -> None:
    last = narrow.get("/api/v1/search").json()["pages"]
    text = narrow.get(f"/search?page={last}", headers=MD).text
    notes = [line for line in text.splitlines() if line.startswith("> Note: ")]
    assert any(f"only the first {last * 24} of" in n for n in notes), text[:500]
    cont = [line for line in text.splitlines() if line.startswith("Continue with the papers")]
    assert len(cont) == 1 and "/search?to=" in cont[0]
    assert f"papers; page {last} of {last}." in text and "Next page:" not in text
    first = narrow.get(f"/api/v1/search?{SHORT}").json()["pages"]
    past = narrow.get(f"/search?{SHORT}&page={first + 1}", headers=MD).text
    assert f"papers; {first} pages." in past
    assert f"> Note: page {first + 1} is past the last page ({first})" in past
