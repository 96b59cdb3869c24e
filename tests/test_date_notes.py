"""A date filter that no paper of the index falls in says so (``engine.date_notes``): in the
API's warnings and as a note on the search page, over the session's real index, whose
papers' years (read from the store here) have gaps."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise

import pytest
from starlette.testclient import TestClient

from papersift.engine.search import SearchEngine
from tests.test_web_pages import page

pytest_plugins = ["tests.web_fixtures"]


def years_held(engine: SearchEngine) -> list[int]:
    store = engine.data.store
    papers = store.get(list(range(1, store.count() + 1))).values()
    return sorted({p.published.year for p in papers})


def warnings(client: TestClient, **params: str) -> tuple[int, list[str]]:
    body = client.get("/api/v1/search", params={"q": "neural networks", **params}).json()
    return body["total"], body["warnings"]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_filter_in_a_gap_names_the_years_the_index_lacks(
    client: TestClient, engine: SearchEngine, mode: str
) -> None:
    years = years_held(engine)
    start, end = next((a + 1, b - 1) for a, b in pairwise(years) if b - a > 2)
    span = f"its papers span {years[0]}–{years[-1]}"
    note = f"no paper in this index was published in {end}: it has none from {start}–{end} ({span})"
    total, said = warnings(client, mode=mode, **{"from": str(end), "to": str(end)})
    assert total == 0 and note in said
    doc = page(client, f"/search?q=neural+networks&mode={mode}&from={end}&to={end}")
    notes = [p.text_content() for p in doc.cssselect(".notices p.hint")]
    assert f"Note: {note}" in notes


def test_a_filter_outside_the_span_gives_it(client: TestClient, engine: SearchEngine) -> None:
    years = years_held(engine)
    span = f"its papers span {years[0]}–{years[-1]}"
    after = str(years[-1] + 1)
    _, said = warnings(client, **{"from": after})
    assert f"no paper in this index was published in or after {after}; {span}" in said
    before = str(years[0] - 1)
    _, said = warnings(client, to=before)
    assert f"no paper in this index was published in or before {before}; {span}" in said
    # Days after the newest paper of a year the index holds: the span's dates.
    store = engine.data.store
    dates = sorted(p.published for p in store.get(list(range(1, store.count() + 1))).values())
    day = dates[-1] + timedelta(days=1)
    _, said = warnings(client, **{"from": day.isoformat()})
    assert said == [
        f"no paper in this index was published on or after {day}; its papers span "
        f"{dates[0]} to {dates[-1]}"
    ]


def test_no_note_when_the_dates_hold_papers(client: TestClient, engine: SearchEngine) -> None:
    year = str(years_held(engine)[-1])
    params = {"q": "+zzqxwv", "from": year, "to": year, "autocorrect": "0"}
    body = client.get("/api/v1/search", params=params).json()
    assert body["total"] == 0 and body["warnings"]  # the word's own note
    assert not any("was published" in w for w in body["warnings"])
