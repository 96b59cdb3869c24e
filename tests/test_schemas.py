"""The response Structs are what the API sends: real responses decode strictly into their
declared types, every field carries the value its name says, and the OpenAPI components are
the Structs' own JSON Schemas."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgspec
import pytest
from starlette.testclient import TestClient

from papersift.engine.results import Hit
from papersift.engine.search import SearchEngine
from papersift.engine.serialize import Stats
from papersift.indexer.snapshot import record_to_paper
from papersift.server import bodies, schemas, schemas_people
from papersift.server.openapi import REF
from tests.corpus import sample_records

pytest_plugins = ["tests.web_fixtures"]

RESPONSES: list[tuple[str, type[msgspec.Struct]]] = [
    ("/api/v1/search?q=pipeline+parallelism", schemas.SearchResponse),
    ("/api/v1/search?q=2401.10241", schemas.SearchResponse),
    ("/api/v1/search?category=cmp-lg&from=1994&sort=oldest", schemas.SearchResponse),
    ("/api/v1/papers/2401.10241", schemas.PaperResponse),
    ("/api/v1/papers/2401.10241/similar?limit=3", schemas.SimilarResponse),
    ("/api/v1/categories", schemas.CategoriesResponse),
    ("/api/v1/stats", Stats),
    ("/healthz", schemas.Health),
    ("/api/v1/researchers?q=lee", schemas_people.ResearcherList),
    ("/api/v1/search?page=0", schemas.Error),
    ("/api/v1/papers/9999.99999", schemas.Error),
]


@pytest.mark.parametrize(("url", "kind"), RESPONSES)
def test_responses_decode_strictly_into_their_struct(
    client: TestClient, url: str, kind: type[msgspec.Struct]
) -> None:
    r = client.get(url)
    decoded = msgspec.json.decode(r.content, type=kind)  # types, bounds, required fields
    # ... and nothing beyond them: the Struct written back is the very same JSON.
    assert msgspec.json.decode(msgspec.json.encode(decoded)) == r.json()


def test_a_researcher_profile_decodes(client: TestClient, engine: SearchEngine) -> None:
    found, _ = engine.people.search("lutz bornmann")
    r = client.get(f"/api/v1/researchers/{found[0].rid}")
    profile = msgspec.json.decode(r.content, type=schemas_people.ResearcherResponse).researcher
    r0 = found[0]
    assert (profile.id, profile.name, profile.papers) == (r0.rid, r0.name, r0.papers)
    assert profile.positions.known == sum(
        (profile.positions.first, profile.positions.middle, profile.positions.last,
         profile.positions.solo)
    )  # fmt: skip


def test_every_paper_field_holds_its_own_value() -> None:
    """The builders pass fields in order (faster): each must land under its own name. A real
    demo paper with every optional field set to a value of its own."""
    demo = record_to_paper(sample_records()[0])
    p = replace(demo, doi="10.1000/x.1", journal_ref="J. Tests 1 (2024) 2",
                comments="9 pages, 2 figures", license="http://creativecommons.org/licenses/by/4.0/",
                citation_count=7, version=3)  # fmt: skip
    body = msgspec.to_builtins(bodies.paper_body(p, "https://x.example"))
    assert body["id"] == p.arxiv_id and body["version"] == 3
    assert (body["title"], body["abstract"]) == (p.title, p.abstract)
    assert body["authors"] == [{"name": a.name, "ids": dict(a.ids)} for a in p.authors]
    assert body["categories"] == list(p.categories)
    assert body["primary_category"] == p.primary_category
    assert (body["published"], body["updated"]) == (p.published.isoformat(), p.updated.isoformat())
    assert (body["doi"], body["journal_ref"], body["comments"], body["license"]) == (
        p.doi, p.journal_ref, p.comments, p.license)  # fmt: skip
    assert body["citation_count"] == 7
    assert body["abs_url"] == "https://arxiv.org/abs/" + p.arxiv_id
    assert body["pdf_url"] == "https://arxiv.org/pdf/" + p.arxiv_id
    assert body["url"].startswith("https://x.example/papers/" + p.arxiv_id + "-")
    hit = bodies.hit_body(Hit(p, 0.5, "<b>t</b>", "s <b>x</b>", {"keyword": 2}), "")
    assert (hit.score, hit.title_html, hit.snippet_html, hit.ranks) == (
        0.5, "<b>t</b>", "s <b>x</b>", {"keyword": 2})  # fmt: skip


def test_the_components_are_the_structs_schemas(client: TestClient) -> None:
    spec: dict[str, Any] = client.get("/openapi.json").json()
    kinds = [schemas.SearchResponse, schemas.Error, schemas_people.ResearcherResponse, Stats]
    _, generated = msgspec.json.schema_components(kinds, ref_template=REF)
    for name, schema in generated.items():
        assert spec["components"]["schemas"][name] == schema, name
    refs = {
        body["schema"]["$ref"]
        for path in spec["paths"].values()
        for op in path.values()
        for response in op["responses"].values()
        for body in response.get("content", {}).values()  # JSON, or an export's text
        if "$ref" in body["schema"]
    }
    assert len(refs) >= 10
    names = {ref.removeprefix("#/components/schemas/") for ref in refs}
    assert names <= set(spec["components"]["schemas"])  # every response documented
