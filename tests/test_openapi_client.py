"""The OpenAPI document as client generators read it (review 35: openapi-python-client dropped
AdminRun and parsed BibTeX as JSON): every schema typed, each export format's body said,
no list of this index's categories to go stale, the redirects and 405s listed, operations
grouped by tag, and a description that says what the API does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.corpus import make_config

pytest_plugins = ["tests.web_fixtures"]
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


@pytest.fixture(scope="module")
def spec(client: TestClient) -> dict[str, Any]:
    doc: dict[str, Any] = client.get("/openapi.json").json()
    return doc


def operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


def schemas_in(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from schemas_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from schemas_in(value)


@pytest.fixture(scope="module")
def admin_spec(engine: SearchEngine, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The document of a server with an admin token (the admin operations' schemas)."""
    config = make_config(tmp_path_factory.mktemp("admin"), server={"admin_token": "t" * 32})
    with TestClient(create_app(engine, config)) as c:
        doc: dict[str, Any] = c.get("/openapi.json").json()
    return doc


def test_every_non_string_enum_has_a_type(admin_spec: dict[str, Any]) -> None:
    """A generator infers a string enum's type, not a boolean one's: ``{"enum": [true]}``
    alone made openapi-python-client drop the whole AdminRun model."""
    for schema in schemas_in(admin_spec):
        values = [*schema.get("enum", ()), *([schema["const"]] if "const" in schema else [])]
        if any(not isinstance(v, str) for v in values):
            assert "type" in schema, schema
    started = admin_spec["components"]["schemas"]["AdminRun"]["properties"]["started"]
    assert started == {"type": "boolean", "const": True}
    ok = admin_spec["paths"]["/api/v1/admin/run/{job}"]["post"]["responses"]["202"]
    assert ok["content"]["application/json"]["schema"]["$ref"].endswith("/AdminRun")


def test_export_says_each_formats_body(spec: dict[str, Any], client: TestClient) -> None:
    op = spec["paths"]["/api/v1/export"]["get"]
    content = op["responses"]["200"]["content"]
    formats = next(p for p in op["parameters"] if p["name"] == "format")["schema"]["enum"]
    assert len(content) == len(formats)
    for fmt in formats:
        r = client.get("/api/v1/export", params={"format": fmt, "q": "parsing", "limit": 2})
        assert r.status_code == 200
        media = r.headers["content-type"].split(";")[0]
        schema = content[media]["schema"]  # the type the server sends is documented
        body = r.json() if schema["type"] == "array" else r.text
        Draft202012Validator(schema).validate(body)
        assert (schema["type"] == "string") == (fmt in ("bibtex", "ris")), fmt
    assert "`format` chooses the media type" in op["description"]


def test_categories_are_a_pattern_not_this_indexs_list(
    spec: dict[str, Any], client: TestClient, engine: SearchEngine
) -> None:
    """The document does not change with the harvest; a generated client takes any case."""
    ops = [op for _, _, op in operations(spec) if "parameters" in op]
    items = [
        p["schema"]["items"] for op in ops for p in op["parameters"] if p["name"] == "category"
    ]
    body = spec["components"]["schemas"]["RecommendRequest"]["properties"]["category"]
    items.append(body["items"])
    assert len(items) == 5  # search, references, citations, export; recommend's body
    here = [c.value for c in engine.stats().categories]
    for schema in items:
        assert "enum" not in schema and schema["type"] == "string"
        assert "/api/v1/categories" in schema["description"]
        check = Draft202012Validator(schema)
        for value in [*here, *schema["examples"], "CS.ir", "cs.ir, cs.lg", ""]:
            assert check.is_valid(value), value
        assert not check.is_valid("cs/IR") and not check.is_valid("1cs")
    r = client.get("/api/v1/search", params={"category": here[0].upper(), "page_size": 1})
    assert r.status_code == 200 and r.json()["request"]["category"] == [here[0]]


def test_redirects_and_405s_are_listed(spec: dict[str, Any], client: TestClient) -> None:
    for path in ("/api/v1/researchers/{id}", "/api/v1/institutions/{id}"):
        moved = spec["paths"][path]["get"]["responses"]["301"]
        assert "content" not in moved and "Location" in moved["headers"]
    for _, _, op in operations(spec):
        response = op["responses"]["405"]
        assert response["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    # What the 405 is: another method on a documented path.
    r = client.post("/api/v1/search")
    assert r.status_code == 405 and r.json()["error"]["status"] == 405
    r = client.get("/api/v1/similar")
    assert r.status_code == 405 and "POST" in r.headers["allow"]


def test_operations_are_grouped_by_tag(spec: dict[str, Any]) -> None:
    tags = [t["name"] for t in spec["tags"]]
    assert tags == ["search", "papers", "researchers", "institutions", "index", "admin"]
    assert all(t["description"] for t in spec["tags"])
    seen: dict[str, set[str]] = {t: set() for t in tags}
    for path, _, op in operations(spec):
        (tag,) = op["tags"]
        seen[tag].add(path)
    assert all(seen.values()), seen
    assert "/api/v1/papers/{id}/similar" in seen["papers"]
    assert "/api/v1/admin/run/{job}" in seen["admin"]
    assert "/api/v1/recommend" in seen["search"]


def test_description_says_what_the_api_does(spec: dict[str, Any]) -> None:
    text = spec["info"]["description"]
    assert "read-only" not in text.lower()
    assert "admin" in text and "POST /api/v1/similar" in text
    posts = {path for path, method, _ in operations(spec) if method == "post"}
    assert posts == {"/api/v1/similar", "/api/v1/recommend", "/api/v1/admin/run/{job}"}
