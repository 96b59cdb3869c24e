"""The researchers and institutions facets count the first ``PEOPLE_WINDOW`` results of a
longer list: the API says so (``facets.counted_among_first``, in the OpenAPI document) and
the search page says so at those facets, over the session's real index (~320 papers)."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from papersift.engine.list_facets import PEOPLE_WINDOW
from tests.test_web_api import check
from tests.test_web_pages import page

pytest_plugins = ["tests.web_fixtures"]


def facet_note(doc: Any, facet: str) -> str | None:
    """The note under a facet's heading on the search page; None without one."""
    (section,) = [s for s in doc.cssselect(".facets section") if s.findtext("h2") == facet]
    notes = section.cssselect(".facet-note")
    return notes[0].text_content() if notes else None


def test_a_list_longer_than_the_window_says_what_the_facet_counted(client: TestClient) -> None:
    spec: dict[str, Any] = client.get("/openapi.json").json()
    body = client.get("/api/v1/search", params={"mode": "keyword", "sort": "newest"}).json()
    check(spec, "/api/v1/search", 200, body)
    total = body["total"]
    assert total > PEOPLE_WINDOW
    assert body["facets"]["counted_among_first"] == PEOPLE_WINDOW
    # Why it must be said: a researcher has more papers among the results than the count.
    short = []
    for f in body["facets"]["researchers"][:10]:
        found = client.get("/api/v1/search", params={"researcher_id": f["value"]}).json()
        short += [f["name"]] if found["total"] > f["count"] else []
    assert short
    doc = page(client, "/search?mode=keyword&sort=newest")
    assert facet_note(doc, "Researchers") == (
        f"Counted among the first {PEOPLE_WINDOW} of {total} results; the filter may find more."
    )
    schema = spec["components"]["schemas"]["SearchFacets"]
    assert "counted_among_first" in schema["required"]
    assert "counted_among_first" in schema["properties"]["institutions"]["description"]


def test_a_shorter_list_counts_every_result_and_says_nothing(client: TestClient) -> None:
    params = {"q": "citation impact", "mode": "keyword"}
    body = client.get("/api/v1/search", params=params).json()
    assert 0 < body["total"] <= PEOPLE_WINDOW and body["facets"]["researchers"]
    assert body["facets"]["counted_among_first"] is None
    for f in body["facets"]["researchers"][:5]:  # each count is the filter's total
        found = client.get("/api/v1/search", params={**params, "researcher_id": f["value"]})
        assert found.json()["total"] == f["count"]
    assert facet_note(page(client, "/search?q=citation+impact&mode=keyword"), "Researchers") is None
