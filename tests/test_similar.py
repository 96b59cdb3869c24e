"""Papers like this text, over HTTP against the real app on the session's real index: a
paper's own abstract pasted finds it first, the ranking is plain cosine over the stored
vectors (numpy as the reference), filters apply, bad bodies are clear 4xx."""

from __future__ import annotations

import json
from typing import Any

import httpx
import numpy as np
import pytest

from papersift.engine.results import Filters
from papersift.engine.search import SearchEngine
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]


def _papers(engine: SearchEngine, n: int) -> list[Any]:
    store = engine.data.store
    got = store.get(list(range(1, 400)))
    return [got[d] for d in sorted(got)][:: max(1, len(got) // n)][:n]


def test_own_abstract_finds_its_paper(engine: SearchEngine, http: httpx.Client) -> None:
    papers = _papers(engine, 12)
    first = 0
    for p in papers:
        r = http.post("/api/v1/similar", json={"text": p.abstract, "page_size": 5})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["mode"] == "semantic" and body["request"]["q"] == ""
        fields = {"paper", "score", "title_html", "snippet_html", "ranks", "why"}
        assert set(body["hits"][0]) == fields
        first += body["hits"][0]["paper"]["id"] == p.arxiv_id
        scores = [h["score"] for h in body["hits"]]
        assert scores == sorted(scores, reverse=True)
    assert first >= 10  # the model reads title + abstract for papers, the abstract here


def test_ranking_is_plain_cosine(engine: SearchEngine) -> None:
    """Query by example: the order equals exact numpy cosine over the same vectors."""
    data = engine.data
    text = _papers(engine, 3)[1].abstract
    got = engine.similar_text(text, Filters(), 1, 20)
    docids = sorted(engine.data.store.get(list(range(1, 400))))
    vecs = np.stack([v for d in docids if (v := data.vectors.vector(d)) is not None])
    held = [d for d in docids if data.vectors.vector(d) is not None]
    q = data.embedder.embed_query(" ".join(text.split()))
    order = np.argsort(-(vecs @ q), kind="stable")[:20]
    want = [held[i] for i in order]
    have = [data.store.docid_of(h.paper.arxiv_id) for h in got.hits]
    assert have == want
    expected = (vecs @ q)[order]
    assert np.allclose([h.score for h in got.hits], expected, atol=1e-5)


def test_filters_and_paging(engine: SearchEngine, http: httpx.Client) -> None:
    p = _papers(engine, 4)[2]
    cat = p.categories[0]
    body = http.post(
        "/api/v1/similar", json={"text": p.abstract, "category": [cat], "page_size": 10}
    ).json()
    assert body["hits"] and all(cat in h["paper"]["categories"] for h in body["hits"])
    page2 = http.post(
        "/api/v1/similar", json={"text": p.abstract, "category": [cat], "page_size": 10, "page": 2}
    ).json()
    assert not {h["paper"]["id"] for h in body["hits"]} & {h["paper"]["id"] for h in page2["hits"]}
    assert page2["next"] is None


@pytest.mark.parametrize(
    ("payload", "parameter"),
    [
        ({"text": "   "}, "text"),
        ({"text": "x" * 20_001}, "text"),
        # Found by the schemathesis campaign: over maxLength as sent, under it once runs of
        # whitespace are cleaned (21,000 characters, 14,000 after); it was accepted.
        ({"text": "a\t\t" * 7_000}, "text"),
        ({"text": "fine", "page_size": 101}, "page_size"),
        ({"text": 5}, "text"),
        ({"text": "fine", "colour": "red"}, "colour"),
        ({"text": "fine", "from": "2020-13-01"}, "from"),  # the schema's date pattern
        ({"text": "fine", "from": "2020-02-30"}, "from"),  # a day the month has not
        ({"text": "fine", "from": "2021", "to": "2020"}, "from"),
    ],
)
def test_bad_bodies_are_clear_400s(http: httpx.Client, payload: Any, parameter: str) -> None:
    r = http.post("/api/v1/similar", json=payload)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["parameter"] == parameter
    assert "regex" not in error["message"]  # a date says what is expected, not the pattern


def test_not_json_and_too_large(http: httpx.Client) -> None:
    r = http.post("/api/v1/similar", content=b"{not json")
    assert r.status_code == 400 and r.json()["error"]["parameter"] == "body"
    r = http.post("/api/v1/similar", content=b'{"text": "' + b"a" * 400_000 + b'"}')
    assert r.status_code == 413
    # The longest schema-valid text, every character outside the BMP and so escaped as a
    # surrogate pair (240 KB), got the 64 KB cap's 413 (found beside the schemathesis
    # campaign, issue 24); the same text in UTF-8 too.
    text = "\U0001f600" * 20_000
    headers = {"Content-Type": "application/json"}
    for raw in (json.dumps({"text": text, "page_size": 1}).encode(),
                json.dumps({"text": text}, ensure_ascii=False).encode()):  # fmt: skip
        assert len(raw) > 64 * 1024
        assert http.post("/api/v1/similar", content=raw, headers=headers).status_code == 200
    assert http.get("/api/v1/similar").status_code == 405


def test_similar_page_form(engine: SearchEngine, http: httpx.Client) -> None:
    empty = parse_html(http.get("/similar").text)
    assert empty.cssselect("form.similar-form textarea[name=text]")
    assert "first 256 tokens" in empty.cssselect("main")[0].text_content()
    assert empty.cssselect("li.hit") == []
    p = _papers(engine, 5)[3]
    posted = parse_html(http.post("/similar", data={"text": p.abstract}).text)
    ids = [s.text_content() for s in posted.cssselect("li.hit .arxiv-id")]
    assert ids[0] == f"arXiv:{p.arxiv_id}" and len(ids) == 24
    assert posted.cssselect("textarea")[0].text_content().strip() == " ".join(p.abstract.split())
    got = parse_html(http.get("/similar", params={"text": p.abstract}).text)
    assert [s.text_content() for s in got.cssselect("li.hit .arxiv-id")] == ids
    assert http.post("/similar", data={"text": "y" * 20_001}).status_code == 400


def test_similar_page_in_an_unknown_category_says_so(http: httpx.Client) -> None:
    """It said "No paper has a vector to compare with yet" when the category had none."""
    page = parse_html(http.post("/similar", data={"text": "graph networks", "category": "zz"}).text)
    said = " ".join(page.cssselect("main")[0].text_content().split())
    assert "No paper in category zz to compare with" in said and "yet" not in said
