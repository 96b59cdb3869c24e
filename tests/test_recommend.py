"""Recommendations over the real app and index: the API against an exact numpy reference and
its OpenAPI schema, bad requests as clear 400s, the tag's recommended page."""

from __future__ import annotations

import dataclasses
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from starlette.testclient import TestClient

from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.recommend import _negatives, recommend, svm_floor, svm_scores
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from tests.member_kit import add_member, csrf_of, sign_in
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures", "tests.member_fixtures"]

SEEDS = ["2401.10241", "2402.02447"]  # pipeline parallelism, BERT training: one paper close
RAG = ["2503.14649", "2508.12282", "2505.22571", "2602.15856"]  # retrieval-augmented generation
WINDOW = {"from": "2020-01-01", "to": "2026-12-31"}
FAR = {"from": "1994-01-01", "to": "1998-12-31"}  # computational linguistics only


def svm_passed(
    engine: SearchEngine, seeds: list[str], start: str, end: str
) -> list[tuple[str, float | None]]:
    """The window's papers (seeds left out) the product's model, fitted directly
    (``svm_scores`` on the texts, the same fixed negatives), ranks at or above its floor,
    best first, each with its cosine to the seeds' centroid (numpy on the stored vectors;
    None without a vector)."""
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
    fitted = svm_scores(
        [text[d] for d in seed_docids],
        [f"{p.title}. {p.abstract}" for p in data.store.get(negatives).values()],
        [text[d] for d in window],
    )
    assert fitted is not None
    centre = np.mean([data.vectors.vector(d) for d in seed_docids if d is not None], axis=0)
    centre /= np.linalg.norm(centre)

    def cosine(docid: int) -> float | None:
        v = data.vectors.vector(docid)
        return None if v is None else float(np.dot(v, centre))

    order = np.argsort(-fitted.scores, kind="stable")
    return [
        (papers[window[i]].arxiv_id, cosine(window[i]))
        for i in order
        if fitted.scores[i] >= fitted.floor
    ]


def reference(engine: SearchEngine, seeds: list[str], start: str, end: str) -> list[str]:
    """What the product recommends: the SVM's list less the papers far from the seeds'
    centroid (``[search] recommend_cosine_floor``): checks the window, the exclusion of
    seeds, the floor and the paging around it."""
    return [
        i
        for i, cos in svm_passed(engine, seeds, start, end)
        if cos is None or cos >= engine.config.search.recommend_cosine_floor
    ]


def by_category(engine: SearchEngine, category: str, n: int) -> list[str]:
    result = engine.search(
        SearchRequest(filters=Filters(categories=(category,)), sort="newest", page_size=n)
    )
    return [h.paper.arxiv_id for h in result.hits]


def test_seeds_of_a_topic_bring_that_topic(client: TestClient, engine: SearchEngine) -> None:
    """Digital-libraries seeds bring digital-libraries papers, 1990s computational
    linguistics brings more of it, from the whole corpus (mostly recent cs.CL): only those
    (the papers of other fields are below the floor, however many places are left)."""
    everything = {"from": "1990-01-01", "to": "2026-12-31", "page_size": 10}
    for category in ("cs.DL", "cmp-lg"):
        seeds = by_category(engine, category, 5)
        body = client.post("/api/v1/recommend", json={"ids": seeds, **everything}).json()
        cats = [h["paper"]["categories"] for h in body["hits"]]
        assert len(cats) >= 3, (category, cats)
        if category == "cs.DL":  # nothing else is close
            assert all(category in c for c in cats), cats
        else:  # a few new cs.CL papers on grammars and tagging are
            assert sum(category in c for c in cats) >= 8, cats


def test_nothing_close_recommends_nothing(client: TestClient, engine: SearchEngine) -> None:
    """Bibliometrics seeds (digital libraries up to 2016) against a window of 1990s
    computational linguistics only: nothing is recommended, and the answer says so; against
    the digital-libraries papers of 2017-2019, those close pass."""
    seeds = [
        h.paper.arxiv_id
        for h in engine.search(SearchRequest(
            filters=Filters(categories=("cs.DL",), date_to=date(2016, 12, 31)), sort="newest",
            page_size=5))
        .hits
    ]  # fmt: skip
    n_far = engine.search(SearchRequest(filters=Filters(
        date_from=date(1994, 1, 1), date_to=date(1998, 12, 31)))).total  # fmt: skip
    far = client.post("/api/v1/recommend", json={"ids": seeds, **FAR}).json()
    assert (far["hits"], far["total"], far["ranked"]) == ([], 0, n_far)
    assert n_far > 20 and far["warnings"] == [
        f"nothing in this window is close to the seed papers (none of its {n_far} papers)"
    ]
    # The default window (June 2026: language models) holds nothing close either.
    default = recommend(engine, seeds)
    assert not default.hits and default.ranked > 50
    assert any(w.startswith("nothing in this window is close") for w in default.warnings)
    near = client.post(
        "/api/v1/recommend", json={"ids": seeds, "from": "2017-01-01", "to": "2019-12-31"}
    ).json()
    assert near["hits"] and near["total"] == len(
        reference(engine, seeds, "2017-01-01", "2019-12-31")
    )
    assert all("cs.DL" in h["paper"]["categories"] for h in near["hits"])
    assert near["total"] < near["ranked"] and not any("nothing" in w for w in near["warnings"])


def test_svm_floor_by_hand() -> None:
    """The margin over the intercept (-0.1) the seeds' median (0.4) has is 0.5: the floor
    is 5% of it over the intercept. Seeds the model puts at or below the intercept set no
    floor (the cosine decides)."""
    seeds = np.array([0.9, 0.2, 0.4])
    assert svm_floor(seeds, -0.1, 0.05) == pytest.approx(-0.075)
    assert svm_floor(seeds, -0.1, 1.0) == pytest.approx(0.4)
    assert svm_floor(np.array([-0.3, -0.1]), -0.1) == -np.inf


def check_schema(spec: dict[str, Any], name: str, body: Any) -> None:
    schema = {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}
    Draft202012Validator(schema, format_checker=FormatChecker()).validate(body)


def test_recommend_matches_the_reference(client: TestClient, engine: SearchEngine) -> None:
    r = client.post("/api/v1/recommend", json={"ids": RAG, **WINDOW, "page_size": 10})
    assert r.status_code == 200, r.text
    body = r.json()
    want = reference(engine, RAG, WINDOW["from"], WINDOW["to"])
    got = [h["paper"]["id"] for h in body["hits"]]
    assert got == want[:10] and len(want) > 20
    assert not set(got) & set(RAG)
    assert body["total"] == len(want) and body["seeds"] == RAG and body["warnings"] == []
    assert body["ranked"] > len(want)  # the window's other papers, below the floor
    assert [h["ranks"]["recommended"] for h in body["hits"]] == list(range(1, 11))
    page2 = client.post(
        "/api/v1/recommend", json={"ids": RAG, **WINDOW, "page_size": 10, "page": 2}
    ).json()
    assert [h["paper"]["id"] for h in page2["hits"]] == want[10:20]
    last = -(-len(want) // 10)  # the last page holds the last of them; the next one is empty
    tail = client.post(
        "/api/v1/recommend", json={"ids": RAG, **WINDOW, "page_size": 10, "page": last}
    ).json()
    assert (
        tail["pages"] == last
        and [h["paper"]["id"] for h in tail["hits"]] == want[10 * (last - 1) :]
    )
    spec = client.get("/openapi.json").json()
    check_schema(spec, "RecommendResponse", body)
    check_schema(spec, "RecommendRequest", {"ids": RAG, **WINDOW})
    operation = spec["paths"]["/api/v1/recommend"]["post"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RecommendResponse"
    }


def test_far_papers_the_svm_passes_are_dropped(
    client: TestClient, engine: SearchEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SVM's list less the papers whose vector is far from the seeds' centroid: with the
    cosine floor between those of the SVM's papers, exactly the ones at or above it stay."""
    passed = svm_passed(engine, RAG, WINDOW["from"], WINDOW["to"])
    cosines = sorted({c for _, c in passed if c is not None})
    assert len(cosines) >= 2
    cut = (cosines[len(cosines) // 2 - 1] + cosines[len(cosines) // 2]) / 2
    search = dataclasses.replace(engine.config.search, recommend_cosine_floor=cut)
    monkeypatch.setattr(engine, "config", dataclasses.replace(engine.config, search=search))
    body = client.post("/api/v1/recommend", json={"ids": RAG, **WINDOW, "page_size": 100})
    got = [h["paper"]["id"] for h in body.json()["hits"]]
    assert got == [i for i, c in passed if c is None or c >= cut] and 0 < len(got) < len(passed)


def test_filters_and_default_window(client: TestClient, engine: SearchEngine) -> None:
    cat = client.post(
        "/api/v1/recommend", json={"ids": RAG, **WINDOW, "category": ["cs.IR"]}
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
        ({}, "ids", "'ids' is required: arXiv ids such as 2401.10241"),  # msgspec's words before
        ({"ids": ["not an id"]}, "ids", "arXiv ids such as 2401.10241"),
        ({"ids": SEEDS, "colour": "red"}, "colour", "unknown field"),
        ({"ids": SEEDS, "page": 0}, "page", ">= 1"),
        # A page past the window of a list that ends inside it answers as search does:
        # tests/test_past_window.py::test_recommendations_page_as_the_search_does.
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
    want = reference(engine, SEEDS, WINDOW["from"], WINDOW["to"])
    assert shown == want[: len(shown)] and shown
    count = parse_html(page.text).cssselect("p.recommended-count")[0].text_content()
    assert " ".join(count.split()).startswith(f"{len(want)} of the ")
    assert "are close to the tag's 2 papers" in " ".join(count.split())
    # Pipeline parallelism has nothing close among 1990s computational linguistics.
    far = parse_html(site.get(f"/library/{tag}/recommended", params=FAR).text)
    assert not far.cssselect("li.hit")
    notes = [" ".join(e.text_content().split()) for e in far.cssselect(".warning")]
    assert any(n.startswith("nothing in this window is close to the seed papers") for n in notes)
    assert "Nothing to recommend in this window" in far.cssselect("[role=status]")[0].text_content()
    assert site.get(f"/library/{tag}/recommended", params={"from": "bad"}).status_code == 400
