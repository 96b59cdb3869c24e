"""Recommendations over the real app and index: the API against an exact numpy reference and
its OpenAPI schema, bad requests as clear 400s, the tag's recommended page."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from starlette.testclient import TestClient

from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.recommend import _negatives, svm_scores
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from tests.member_kit import add_member, csrf_of, sign_in
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures", "tests.member_fixtures"]

SEEDS = ["2401.10241", "2402.02447"]
WINDOW = {"from": "2020-01-01", "to": "2026-12-31"}


def reference(engine: SearchEngine, seeds: list[str], start: str, end: str) -> list[str]:
    """The window's papers (seeds left out) ranked by the product's model fitted directly
    (``svm_scores`` on the texts, the same fixed negatives): checks the window, the
    exclusion of seeds and the paging around it."""
    data = engine.data
    seed_docids = [data.store.docid_of(s) for s in seeds]
    filt = keyword_filter(
        data.lexical, Filters(date_from=date.fromisoformat(start), date_to=date.fromisoformat(end))
    )
    assert filt is not None
    window = [int(d) for d in data.lexical.allowed(filt) if int(d) not in seed_docids]
    papers = data.store.get([*seed_docids, *window])
    text = {d: f"{p.title}. {p.abstract}" for d, p in papers.items()}
    negatives = _negatives(engine, set(seed_docids))
    scores = svm_scores(
        [text[d] for d in seed_docids],
        [f"{p.title}. {p.abstract}" for p in data.store.get(negatives).values()],
        [text[d] for d in window],
    )
    assert scores is not None
    order = np.argsort(-scores, kind="stable")
    return [papers[window[i]].arxiv_id for i in order]


def by_category(engine: SearchEngine, category: str, n: int) -> list[str]:
    result = engine.search(
        SearchRequest(filters=Filters(categories=(category,)), sort="newest", page_size=n)
    )
    return [h.paper.arxiv_id for h in result.hits]


def test_seeds_of_a_topic_bring_that_topic(client: TestClient, engine: SearchEngine) -> None:
    """Digital-libraries seeds bring digital-libraries papers, 1990s computational
    linguistics brings more of it, from the whole corpus (mostly recent cs.CL)."""
    everything = {"from": "1990-01-01", "to": "2026-12-31", "page_size": 10}
    for category in ("cs.DL", "cmp-lg"):
        seeds = by_category(engine, category, 5)
        body = client.post("/api/v1/recommend", json={"ids": seeds, **everything}).json()
        cats = [h["paper"]["categories"] for h in body["hits"]]
        assert sum(category in c for c in cats) >= 8, (category, cats)


def check_schema(spec: dict[str, Any], name: str, body: Any) -> None:
    schema = {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}
    Draft202012Validator(schema, format_checker=FormatChecker()).validate(body)


def test_recommend_matches_the_reference(client: TestClient, engine: SearchEngine) -> None:
    r = client.post("/api/v1/recommend", json={"ids": SEEDS, **WINDOW, "page_size": 10})
    assert r.status_code == 200, r.text
    body = r.json()
    want = reference(engine, SEEDS, WINDOW["from"], WINDOW["to"])
    got = [h["paper"]["id"] for h in body["hits"]]
    assert got == want[:10]
    assert not set(got) & set(SEEDS)
    assert body["total"] == len(want) and body["seeds"] == SEEDS and body["warnings"] == []
    assert [h["ranks"]["recommended"] for h in body["hits"]] == list(range(1, 11))
    page2 = client.post(
        "/api/v1/recommend", json={"ids": SEEDS, **WINDOW, "page_size": 10, "page": 2}
    ).json()
    assert [h["paper"]["id"] for h in page2["hits"]] == want[10:20]
    spec = client.get("/openapi.json").json()
    check_schema(spec, "RecommendResponse", body)
    check_schema(spec, "RecommendRequest", {"ids": SEEDS, **WINDOW})
    operation = spec["paths"]["/api/v1/recommend"]["post"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RecommendResponse"
    }


def test_filters_and_default_window(client: TestClient, engine: SearchEngine) -> None:
    cat = client.post(
        "/api/v1/recommend", json={"ids": SEEDS, **WINDOW, "category": ["cs.IR"]}
    ).json()
    assert cat["hits"] and all("cs.IR" in h["paper"]["categories"] for h in cat["hits"])
    default = client.post("/api/v1/recommend", json={"ids": SEEDS}).json()
    _, newest = engine.data.lexical.date_range()
    assert default["to"] == str(newest)
    assert any(
        w.startswith("no dates given: the 30 days up to the newest paper")
        for w in default["warnings"]
    )
    missing = client.post(
        "/api/v1/recommend", json={"ids": [*SEEDS, "9912.99999"], **WINDOW}
    ).json()
    assert "not in this index, left out: 9912.99999" in missing["warnings"]
    assert missing["seeds"] == SEEDS
    absent = [f"9912.{n:05d}" for n in range(90000, 90200)]  # one warning, not 200
    many = client.post("/api/v1/recommend", json={"ids": [*SEEDS, *absent], **WINDOW}).json()
    assert [w for w in many["warnings"] if "not in this index" in w] == [
        "not in this index, left out: 9912.90000, 9912.90001, 9912.90002 and 197 more"
    ]


@pytest.mark.parametrize(
    ("body", "parameter", "needle"),
    [
        ({"ids": []}, "ids", "length >= 1"),
        ({"ids": ["not an id"]}, "ids", "arXiv ids such as 2401.10241"),
        ({"ids": SEEDS, "colour": "red"}, "colour", "unknown field"),
        ({"ids": SEEDS, "page": 0}, "page", ">= 1"),
        ({"ids": SEEDS, "page": 500, "page_size": 100}, "page", "past the result window"),
        ({"ids": SEEDS, "from": "2026-13-01"}, "from", "a date such as 2024"),
        ({"ids": SEEDS, "category": ["no.such"]}, "category", "no.such"),
        ({"ids": SEEDS, "page_size": 1000}, "page_size", ""),
        ({"ids": ["9912.99999"]}, None, ""),
    ],
)
def test_bad_requests_are_clear_400s(
    client: TestClient, body: dict[str, Any], parameter: str | None, needle: str
) -> None:
    r = client.post("/api/v1/recommend", json=body)
    if parameter is None:  # only unknown seeds: nothing to rank, said so
        assert r.status_code == 200 and r.json()["hits"] == [] and r.json()["warnings"]
        return
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["parameter"] == parameter and needle in error["message"]


def test_not_json_is_a_400(client: TestClient) -> None:
    r = client.post(
        "/api/v1/recommend", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["error"]["parameter"] == "body"
    r = client.post("/api/v1/recommend", content=b"ids=1", headers={"content-type": "text/plain"})
    assert r.status_code == 400 and "JSON object" in r.json()["error"]["message"]
    assert client.get("/api/v1/recommend").status_code == 405


def test_tag_recommended_page(site: TestClient, members_root: Path, engine: SearchEngine) -> None:
    add_member(members_root, "rae@lab.example")
    sign_in(site, "rae@lab.example")
    made = site.post(
        "/library/tags",
        data={
            "csrf": csrf_of(site.get("/library"), "form[action='/library/tags']"),
            "name": "Seeds",
        },
    )
    tag = int(made.headers["location"].rsplit("/", 1)[1])
    empty = site.get(f"/library/{tag}/recommended")
    assert (
        empty.status_code == 200
        and "no papers yet" in parse_html(empty.text).cssselect("[role=status]")[0].text
    )
    for arxiv_id in SEEDS:
        page = site.get("/library/save", params={"id": arxiv_id})
        site.post("/library/save", data={"csrf": csrf_of(page), "id": arxiv_id, "tag": str(tag)})
    page = site.get(f"/library/{tag}/recommended", params=WINDOW)
    assert page.status_code == 200
    shown = [
        e.text_content().removeprefix("arXiv:")
        for e in parse_html(page.text).cssselect("li.hit .arxiv-id")
    ]
    assert shown == reference(engine, SEEDS, WINDOW["from"], WINDOW["to"])[: len(shown)] and shown
    assert site.get(f"/library/{tag}/recommended", params={"from": "bad"}).status_code == 400
