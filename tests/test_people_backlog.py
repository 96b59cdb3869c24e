"""Researcher identities as a backlog: an import leaves them, ``index_backlog`` clusters them
in slices, and search reads them from the people tables (no Tantivy rewrite)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer import identity_refresh as identity_refresh_mod
from papersift.indexer.build import import_files
from papersift.indexer.identity_refresh import refresh_people
from tests.corpus import demo_records, make_config, write_jsonl


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return demo_records()[:150]


def _partition(data: DataDir) -> set[frozenset[tuple[int, int]]]:
    """The researchers as sets of (docid, author position): equal however ids were given."""
    groups: dict[int, set[tuple[int, int]]] = {}
    with data.store.reading() as db:
        for d, pos, rid in db.execute("SELECT docid, position, rid FROM authorships"):
            groups.setdefault(int(rid), set()).add((int(d), int(pos)))
    return {frozenset(g) for g in groups.values()}


def test_import_leaves_researchers_to_the_backlog(
    fresh_config: Config, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)])
    n = data.store.count()  # one record of the slice is a newer version of another
    assert data.people_pending() == n
    engine = SearchEngine(data)
    assert engine.search(SearchRequest(query="citation", mode="keyword")).total > 0
    assert data.people.search("")[1] == 0  # no researchers yet
    report = refresh_people(data)
    assert report.papers == n and data.people_pending() == 0
    with data.store.reading() as db:
        missing = db.execute("SELECT COUNT(*) FROM authorships WHERE rid IS NULL").fetchone()[0]
        rows = db.execute("SELECT COUNT(*) FROM authorships").fetchone()[0]
    assert missing == 0
    assert rows == sum(len(p.authors) for p in data.store.get(list(range(1, 200))).values())
    assert refresh_people(data).papers == 0  # nothing left: a no-op
    engine.close()


def test_slices_give_the_same_researchers_and_survive_a_crash(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_jsonl(tmp_path / "a.jsonl", records)
    (tmp_path / "whole").mkdir()
    (tmp_path / "sliced").mkdir()
    whole = DataDir(make_config(tmp_path / "whole"))
    import_files(whole, [source])
    refresh_people(whole)

    monkeypatch.setattr(identity_refresh_mod, "PEOPLE_SLICE", 40)
    sliced = DataDir(make_config(tmp_path / "sliced"))
    import_files(sliced, [source])
    real = identity_refresh_mod.refresh_identities
    calls = 0

    def crash_on_the_third(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt  # as if the process were stopped mid-backlog
        return real(*args, **kwargs)

    monkeypatch.setattr(identity_refresh_mod, "refresh_identities", crash_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        refresh_people(sliced)
    n = sliced.store.count()
    assert sliced.people_pending() == n - 80  # two slices committed
    monkeypatch.setattr(identity_refresh_mod, "refresh_identities", real)
    report = refresh_people(sliced)
    assert report.papers == n - 80 and sliced.people_pending() == 0
    assert _partition(sliced) == _partition(whole)
    whole.close()
    sliced.close()


def test_researcher_filter_and_facet_follow_the_identity_tables(
    fresh_config: Config, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    """Clustering after the keyword index committed changes what a researcher filter finds
    and what the facet counts, at once, with the result cache on and no index rewrite."""
    assert fresh_config.search.cache_size > 0
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)])
    engine = SearchEngine(data)
    generation = data.lexical.generation
    browse = SearchRequest(query="citation", mode="keyword", page_size=50)
    assert engine.search(browse).facets["researchers"] == ()
    refresh_people(data)
    assert data.lexical.generation == generation  # Tantivy was not touched
    facet = engine.search(browse).facets["researchers"]
    assert facet and facet[0].count >= facet[-1].count
    top = int(facet[0].value)
    with data.store.reading() as db:
        theirs = {
            str(a)
            for (a,) in db.execute(
                "SELECT p.arxiv_id FROM authorships a JOIN papers p USING (docid) WHERE a.rid = ?",
                (top,),
            )
        }
    # (semantic and hybrid filters: tests/test_researcher_pages.py, on the embedded index)
    req = SearchRequest(filters=Filters(researcher_ids=(top,)), page_size=50)
    assert {h.paper.arxiv_id for h in engine.search(req).hits} == theirs
    # Two researchers: their joint papers only (none for two strangers).
    other = next(int(f.value) for f in facet if int(f.value) != top)
    both = SearchRequest(filters=Filters(researcher_ids=(top, other)), page_size=50)
    with data.store.reading() as db:
        joint = {
            int(d)
            for (d,) in db.execute(
                "SELECT docid FROM authorships WHERE rid = ? INTERSECT "
                "SELECT docid FROM authorships WHERE rid = ?",
                (top, other),
            )
        }
    assert engine.search(both).total == len(joint)
    assert engine.search(req).warnings == ()
    # A number no researcher has empties the answer, and says so (it said nothing).
    nobody = max(int(f.value) for f in facet) + 10**6
    lost = engine.search(SearchRequest(filters=Filters(researcher_ids=(top, nobody))))
    assert lost.total == 0 and f"no researcher #{nobody} in this index" in lost.warnings
    engine.close()
