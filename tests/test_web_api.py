"""The JSON API and its OpenAPI document: the document is valid, covers every API route,
and every real response (success and error) validates against the schema it documents."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from openapi_spec_validator import validate
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from papersift.engine.search import SearchEngine
from papersift.server.params import SEARCH_PARAMS
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]


@pytest.fixture(scope="module")
def spec(client: TestClient) -> dict[str, Any]:
    r = client.get("/openapi.json")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    doc: dict[str, Any] = r.json()
    return doc


def check(spec: dict[str, Any], path: str, status: int, body: Any) -> None:
    """Validate a response body against the schema the document gives for it."""
    response = spec["paths"][path]["get"]["responses"][str(status)]
    ref = response["content"]["application/json"]["schema"]["$ref"]
    schema = {"$ref": ref, "components": spec["components"]}
    Draft202012Validator(schema, format_checker=FormatChecker()).validate(body)


def test_openapi_document_is_valid(spec: dict[str, Any]) -> None:
    validate(spec)
    assert spec["openapi"].startswith("3.1")
    assert spec["servers"] == [{"url": "http://testserver"}]


def test_openapi_covers_the_routes(spec: dict[str, Any], web_app: Starlette) -> None:
    documented = set(spec["paths"])
    routes = {r.path for r in web_app.routes if isinstance(r, Route)}
    api_routes = {p for p in routes if p.startswith("/api/")} | {"/healthz"}
    # One route serves a paper and its similar papers; every other route is documented as is.
    expanded = {p.replace("{rest:path}", "{id}").replace(":path}", "}") for p in api_routes} | {
        "/api/v1/papers/{id}/similar"
    }
    assert documented == expanded
    documented_params = [p["name"] for p in spec["paths"]["/api/v1/search"]["get"]["parameters"]]
    assert documented_params == list(SEARCH_PARAMS)


EXAMPLES = {
    "/api/v1/search": [
        "?q=pipeline+parallelism",
        "?category=cmp-lg&from=1994&sort=oldest",
        "?q=2401.10241",
        "?researcher=Lillian+Lee&page_size=5",
        "",
    ],
    "/api/v1/papers/{id}": ["2401.10241", "2401.10241v1", "2401.10241v7", "cmp-lg/9405001"],
    "/api/v1/papers/{id}/similar": ["2401.10241", "cmp-lg/9405001"],
    "/api/v1/categories": [""],
    "/api/v1/stats": [""],
    "/healthz": [""],
}


def _url(path: str, example: str) -> str:
    if "{id}" in path:
        return path.replace("{id}", example)
    return path + example


@pytest.mark.parametrize(
    ("path", "example"), [(p, e) for p, examples in EXAMPLES.items() for e in examples]
)
def test_responses_match_the_document(
    client: TestClient, spec: dict[str, Any], path: str, example: str
) -> None:
    r = client.get(_url(path, example))
    assert r.status_code == 200, r.text
    check(spec, path, 200, r.json())
    if path.startswith("/api/"):
        assert r.headers["access-control-allow-origin"] == "*"


@pytest.mark.parametrize(
    ("url", "path", "status", "parameter"),
    [
        ("/api/v1/search?page=0", "/api/v1/search", 400, "page"),
        ("/api/v1/search?page=1000000001", "/api/v1/search", 400, "page"),
        ("/api/v1/search?page_size=5000", "/api/v1/search", 400, "page_size"),
        ("/api/v1/search?mode=magic", "/api/v1/search", 400, "mode"),
        ("/api/v1/search?sort=random", "/api/v1/search", 400, "sort"),
        ("/api/v1/search?from=2024-13", "/api/v1/search", 400, "from"),
        ("/api/v1/search?category=zz.XX", "/api/v1/search", 400, "category"),
        ("/api/v1/search?categroy=cs.IR", "/api/v1/search", 400, "categroy"),
        ("/api/v1/search?q=a&q=b", "/api/v1/search", 400, "q"),
        ("/api/v1/papers/nonsense", "/api/v1/papers/{id}", 400, "id"),
        ("/api/v1/papers/2401.99999", "/api/v1/papers/{id}", 404, None),
        ("/api/v1/papers/2401.10241/similar?limit=0", "/api/v1/papers/{id}/similar", 400, "limit"),
        ("/api/v1/papers/2401.99999/similar", "/api/v1/papers/{id}/similar", 404, None),
        # Every GET endpoint refuses what it does not take, as search does (they ignored it:
        # ?limt=3 gave 10 similar papers), and a single-valued parameter given twice.
        ("/api/v1/papers/2401.10241?limit=3", "/api/v1/papers/{id}", 400, "limit"),
        ("/api/v1/papers/2401.10241/similar?limt=3", "/api/v1/papers/{id}/similar", 400, "limt"),
        ("/api/v1/papers/2401.10241/similar?limit=3&limit=4", "/api/v1/papers/{id}/similar",
         400, "limit"),
        ("/api/v1/categories?q=cs", "/api/v1/categories", 400, "q"),
        ("/api/v1/stats?x=1", "/api/v1/stats", 400, "x"),
        ("/api/v1/researchers/1?page=2", "/api/v1/researchers/{id}", 400, "page"),
        ("/api/v1/researchers?q=a&q=b", "/api/v1/researchers", 400, "q"),
        ("/api/v1/institutions/1?x=1", "/api/v1/institutions/{id}", 400, "x"),
        ("/api/v1/institutions/match?q=MIT&q=CMU", "/api/v1/institutions/match", 400, "q"),
        ("/api/v1/export?format=ris&limit=3&limit=4", "/api/v1/export", 400, "limit"),
    ],
)  # fmt: skip
def test_errors_are_documented_objects(
    client: TestClient,
    spec: dict[str, Any],
    url: str,
    path: str,
    status: int,
    parameter: str | None,
) -> None:
    r = client.get(url)
    assert r.status_code == status
    body = r.json()
    check(spec, path, status, body)
    assert body["error"]["status"] == status
    assert body["error"].get("parameter") == parameter
    assert body["error"]["message"]


def test_unknown_and_repeated_parameters_are_worded_as_search_words_them(
    client: TestClient,
) -> None:
    def message(url: str) -> str:
        r = client.get(url)
        assert r.status_code == 400, r.text
        return str(r.json()["error"]["message"])

    assert message("/api/v1/search?q=a&q=b") == "Give 'q' at most once."
    assert message("/api/v1/papers/2401.10241/similar?limit=3&limit=4") == (
        "Give 'limit' at most once."
    )
    assert message("/api/v1/papers/2401.10241/similar?limt=3") == (
        "Unknown parameter 'limt'; known: limit."
    )
    assert message("/api/v1/categories?q=cs") == "Unknown parameter 'q'; this URL takes none."
    assert message("/api/v1/search?categroy=cs.IR").startswith(
        "Unknown parameter 'categroy'; known: q, mode, category,"
    )
    assert client.get("/api/v1/papers/2401.10241/similar?limit=3").json()["similar"]


def test_unknown_api_route_is_a_json_404(client: TestClient) -> None:
    r = client.get("/api/v1/nothing")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"
    r = client.post("/api/v1/search")
    assert r.status_code == 405
    assert r.json()["error"]["code"] == "method_not_allowed"


def test_a_version_not_here_is_said(client: TestClient) -> None:
    """The paper page shows the newest version with a notice; the API says it too."""
    body = client.get("/api/v1/papers/2401.10241v7").json()
    version = body["paper"]["version"]
    assert version < 7 and body["warnings"] == [
        f"v7 of 2401.10241 is not in this index (yet): this is v{version}, the newest it has"
    ]
    assert client.get(f"/api/v1/papers/2401.10241v{version}").json()["warnings"] == []


def test_search_api_agrees_with_the_page(client: TestClient) -> None:
    api = client.get("/api/v1/search?q=word+sense&category=cs.CL&mode=keyword").json()
    doc = parse_html(client.get("/search?q=word+sense&category=cs.CL&mode=keyword").text)
    ids = [s.text_content().removeprefix("arXiv:") for s in doc.cssselect(".hit .arxiv-id")]
    assert [h["paper"]["id"] for h in api["hits"]] == ids
    assert api["request"]["category"] == ["cs.CL"] and api["mode"] == "keyword"
    assert all(h["paper"]["url"].startswith("http://testserver/papers/") for h in api["hits"])
    # Every filter comes back in the echo (the institution: test_institutions_api).
    echo = client.get("/api/v1/search?researcher_id=7").json()["request"]
    assert echo["researcher_id"] == [7]


def test_next_link_pages_through(client: TestClient) -> None:
    first = client.get("/api/v1/search?page_size=10").json()
    assert first["pages"] > 1
    nxt = urlsplit(first["next"])
    second = client.get(f"{nxt.path}?{nxt.query}").json()
    assert second["page"] == 2
    assert not {h["paper"]["id"] for h in first["hits"]} & {
        h["paper"]["id"] for h in second["hits"]
    }


def test_validators_where_a_body_can_repeat(client: TestClient) -> None:
    """A paper's answer has an ETag that a conditional request matches; a search answer,
    which says how long it took and so never repeats, has none (it would never match)."""
    paper = client.get("/api/v1/papers/cmp-lg/9405001")
    again = client.get(
        "/api/v1/papers/cmp-lg/9405001", headers={"If-None-Match": paper.headers["etag"]}
    )
    assert again.status_code == 304 and again.content == b""
    first, second = (client.get("/api/v1/search?q=word+sense&mode=keyword") for _ in range(2))
    assert first.content != second.content  # the same hits, another took_ms
    assert first.json()["hits"] == second.json()["hits"]
    assert "etag" not in first.headers and first.headers["cache-control"] == "public, max-age=60"


def test_paper_and_similar(client: TestClient, engine: SearchEngine) -> None:
    paper = client.get("/api/v1/papers/cmp-lg/9405001").json()["paper"]
    assert paper["title"] == "Similarity-Based Estimation of Word Cooccurrence Probabilities"
    assert paper["authors"][2]["name"] == "Lillian Lee"
    assert paper["url"].startswith("http://testserver/papers/cmp-lg/9405001-")
    body = client.get("/api/v1/papers/2401.10241/similar?limit=3").json()
    expected = [h.paper.arxiv_id for h in engine.similar("2401.10241", 3)]
    assert [h["paper"]["id"] for h in body["similar"]] == expected and len(expected) == 3


def test_categories_and_stats_agree(client: TestClient, engine: SearchEngine) -> None:
    stats = engine.stats()
    cats = client.get("/api/v1/categories").json()["categories"]
    assert [(c["category"], c["count"]) for c in cats] == [
        (c.value, c.count) for c in stats.categories
    ]
    body = client.get("/api/v1/stats").json()
    assert body["papers"] == stats.papers and body["embedded"] == stats.embedded
    assert client.get("/healthz").json() == {"status": "ok", "papers": stats.papers}


LISTS = [f"/api/v1/papers/2401.10241/{which}" for which in ("similar", "references", "citations")]


@pytest.mark.parametrize("path", ["/api/v1/search", *LISTS])
def test_a_trailing_slash_redirects_everywhere(client: TestClient, path: str) -> None:
    """As Starlette answers it on every other route: a 307 to the path without the slash
    (the paper route takes any path, and read ``2401.10241/similar/`` as a bad id)."""
    r = client.get(path + "/")
    assert r.status_code == 307, r.text
    assert r.headers["location"] == f"http://testserver{path}"
    assert client.get(r.headers["location"]).status_code == 200
    assert client.get(path + "/?sort=newest").headers["location"].endswith("?sort=newest")
