"""A search that finds nothing offers only looser searches it has run and found papers with
(without the filters, by meaning, with a word left out), each with how many, as its own page
counts them; a query of common words alone is not told to check its spelling; and a search
that finds nothing offers no feed to follow. The real app over the session's demo papers."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import pytest
from starlette.testclient import TestClient

from papersift.cli import main
from papersift.core.config import Config
from papersift.server.no_results import MAX_SHORTER, shorter_queries
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

_COUNTED = re.compile(r"^(?P<label>.+) \((?P<count>[\d,]+) papers?\)$")


def empty_state(client: TestClient, params: dict[str, str]) -> Any:
    r = client.get("/search", params=params)
    assert r.status_code == 200, r.text[:300]
    doc = parse_html(r.text)
    assert not doc.cssselect(".hit")
    assert " ".join(doc.cssselect(".result-count")[0].text_content().split()).startswith(
        "No papers found"
    )
    (empty,) = doc.cssselect(".results .empty")
    return doc, empty


def offered(client: TestClient, empty: Any) -> dict[str, int]:
    """The counted suggestions of an empty state, label -> count, each checked against the
    search its link leads to: that many papers, shown on its first page."""
    out = {}
    for a in empty.cssselect("li a"):
        text = " ".join(a.text_content().split())
        m = _COUNTED.match(text)
        if m is None:
            assert a.get("href") in ("/search", "/categories"), text  # browsing
            continue
        count = int(m["count"].replace(",", ""))
        body = client.get("/api/v1/search?" + urlsplit(a.get("href")).query).json()
        assert body["total"] == count > 0 and body["hits"] and body["corrected"] is None, text
        out[m["label"]] = count
    return out


def total(client: TestClient, **params: str) -> int:
    found: int = client.get("/api/v1/search", params=params).json()["total"]
    return found


def test_a_word_left_out_that_finds_papers_is_offered_with_its_count(
    client: TestClient,
) -> None:
    assert total(client, q="qwxzvbnmplk", mode="keyword", autocorrect="0") == 0
    _, empty = empty_state(client, {"q": "parsing qwxzvbnmplk", "mode": "keyword"})
    parsing = total(client, q="parsing", mode="keyword")
    assert parsing > 1
    # Not "qwxzvbnmplk" alone (no paper holds it), nor by meaning (it finds nothing either).
    assert offered(client, empty) == {"Search for “parsing” only": parsing}
    assert "Check the spelling" in empty.text_content()


def test_looser_searches_that_find_nothing_are_not_offered(client: TestClient) -> None:
    # No paper holds "dark" or "halo"; "dark halo" finds papers only as its did-you-mean.
    for words in ("dark matter", "matter halo", "dark halo"):
        assert total(client, q=words, autocorrect="0") == 0, words
    _, empty = empty_state(client, {"q": "dark matter halo"})
    assert offered(client, empty) == {}
    assert [a.get("href") for a in empty.cssselect("li a")] == ["/search", "/categories"]


def test_common_words_alone_get_no_shorter_query_nor_spelling_advice(
    client: TestClient,
) -> None:
    doc, empty = empty_state(client, {"q": "the of and", "mode": "keyword"})
    notes = " ".join(n.text_content() for n in doc.cssselect(".notices .hint"))
    assert "only common words" in notes
    assert offered(client, empty) == {}  # not "the of", nor by meaning
    assert "Check the spelling" not in empty.text_content()


def test_by_meaning_and_without_filters_are_counted_too(client: TestClient) -> None:
    # No paper has the word, some are about it.
    assert total(client, q="lexicography", mode="keyword", autocorrect="0") == 0
    _, empty = empty_state(client, {"q": "lexicography", "mode": "keyword"})
    semantic = total(client, q="lexicography", mode="semantic")
    assert offered(client, empty) == {"Search by meaning (semantic mode)": semantic}
    _, empty = empty_state(client, {"q": "parsing", "mode": "keyword", "category": "cs.LG"})
    assert offered(client, empty)["Search again without any filter"] == total(
        client, q="parsing", mode="keyword"
    )


def test_the_api_and_the_cli_offer_the_same(
    client: TestClient, built_config: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty answer of the API says what to try (``looser``: label, API URL, count), as
    the page does; the CLI prints it. It said only ``total: 0`` (review, session 37)."""
    params = {"q": "parsing qwxzvbnmplk", "mode": "keyword"}
    _, empty = empty_state(client, params)
    body = client.get("/api/v1/search", params=params).json()
    assert body["total"] == 0
    parsing = total(client, q="parsing", mode="keyword")
    assert body["looser"] == [{
        "label": "Search for “parsing” only", "total": parsing,
        "url": "http://testserver/api/v1/search?q=parsing&mode=keyword",
    }]  # fmt: skip
    assert client.get(body["looser"][0]["url"]).json()["total"] == parsing
    assert offered(client, empty) == {"Search for “parsing” only": parsing}
    assert client.get("/api/v1/search", params={"q": "parsing"}).json()["looser"] == []
    code = main(["search", params["q"], "--mode", "keyword", "--config",
                 str(built_config.base_dir / "config.toml")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and f"try: search for “parsing” only ({parsing} papers)" in out


def test_a_search_that_finds_nothing_offers_no_feed(client: TestClient) -> None:
    doc, _ = empty_state(client, {"q": "parsing qwxzvbnmplk", "mode": "keyword"})
    assert not doc.xpath('//a[contains(., "Follow this search")]')
    assert not doc.cssselect(".result-count a.feed")
    assert not doc.xpath('//link[@rel="alternate"][contains(@href, "/rss/search.xml")]')
    found = parse_html(client.get("/search", params={"q": "parsing", "mode": "keyword"}).text)
    (follow,) = found.xpath('//a[contains(., "Follow this search as a feed")]/@href')
    assert follow == "/rss/search.xml?q=parsing&mode=keyword"
    # A page past the last of a search that finds papers still offers it.
    past = parse_html(client.get("/search", params={"q": "parsing", "page": "99"}).text)
    assert past.cssselect(".past-last") and past.xpath('//a[contains(., "Follow this search")]')


@pytest.mark.parametrize(
    ("query", "shorter"),
    [
        ("dark matter halo", ["dark matter", "dark halo", "matter halo"]),
        ('"word sense" disambiguation', ['"word sense"', "disambiguation"]),
        ("a b c d e", ["a b c d", "a b c e", "a b d e"]),
        ("parsing", []),
        ("parsing OR grammar", []),  # leaving a word out would strand the operator
        ("ti:parsing -grammar", ["ti:parsing"]),  # not the excluded word alone
    ],
)
def test_shorter_queries(query: str, shorter: list[str]) -> None:
    assert shorter_queries(query) == shorter
    assert len(shorter) <= MAX_SHORTER
