"""The researcher table against SQLite's own counts on real papers, and following identity
refreshes (a stale table is never used)."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.researcher_table import ResearcherTable
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import import_files
from papersift.indexer.identity_refresh import refresh_people
from tests.corpus import sample_records, write_jsonl


def _all_docids(data: DataDir) -> list[int]:
    with data.store.reading() as db:
        return [d for (d,) in db.execute("SELECT docid FROM papers ORDER BY docid")]


def test_counts_equal_sqlites_over_random_lists(engine: SearchEngine) -> None:
    table = ResearcherTable(engine.data.store.path)
    assert table.current(engine.data.people_generation) is None  # not read yet
    table.build()
    assert table.current(engine.data.people_generation) is table
    people = engine.data.people
    docids = _all_docids(engine.data)
    rng = random.Random(11)
    for size in (1, 7, 60, 200, len(docids)):
        ids = rng.sample(docids, size)
        for top in (3, 30):
            want = people.facet(ids, top)
            assert table.facet(ids, top) == want, (size, top)
            if size >= 60:
                assert len(want) == top  # ties and the cut are exercised
    # Unknown and negative docids are not papers: they count nowhere.
    assert table.facet([-1, 10**9]) == ()
    assert table.facet([]) == ()


def test_search_reads_the_table_and_counts_as_before(engine: SearchEngine) -> None:
    """A search counts with SQLite until the table is read, starts that read, and shows
    the same researchers from the table afterwards."""
    generation = engine.data.people_generation
    saved, unread = engine.researcher_table, ResearcherTable(engine.data.store.path)
    engine.researcher_table = unread
    try:
        assert unread.current(generation) is None
        first = engine.search(SearchRequest("language model", mode="keyword", page_size=13))
        assert unread.wait(30) and unread.current(generation) is unread
        # Page sizes no other test asks for: answers not in the shared engine's cache.
        again = engine.search(SearchRequest("language model", mode="keyword", page_size=14))
    finally:
        engine.researcher_table = saved
    assert again.facets["researchers"] == first.facets["researchers"]
    assert len(first.facets["researchers"]) > 3


def test_a_table_older_than_the_identities_is_not_used(fresh_config: Config) -> None:
    records = sample_records(every=40)
    half = len(records) // 2
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(data.root / "a.jsonl", records[:half])])
    refresh_people(data)  # researcher ids, as `papersift index` assigns them
    data.close()
    engine = open_engine(fresh_config)
    try:
        table = engine.researcher_table
        engine.search(SearchRequest("quantum", mode="keyword"))  # starts the read
        assert table.wait(30)
        old = engine.data.people_generation
        assert table.current(old) is table
        everyone = _all_docids(engine.data)
        before = table.facet(everyone)
        # A second import assigns researchers to more papers: the identities move on.
        import_files(engine.data, [write_jsonl(engine.data.root / "b.jsonl", records[half:])])
        refresh_people(engine.data)
        new = engine.data.people_generation
        assert int(new) > int(old)
        assert table.current(new) is None  # stale: search counts with SQLite meanwhile
        everyone = _all_docids(engine.data)
        want = engine.data.people.facet(everyone)
        assert want != before
        assert engine._researcher_facet(everyone) == want
        table.follow(new)
        assert table.wait(30) and table.current(new) is table
        assert table.facet(everyone) == want
    finally:
        engine.close()


def test_a_failed_read_is_retried_only_for_new_identities(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store that cannot be read says so once per generation, not once per search."""
    table = ResearcherTable(tmp_path / "missing.sqlite")
    with caplog.at_level(logging.WARNING, "papersift.engine.researcher_table"):
        for _ in range(3):
            table.follow("5")
            table.wait(10)
        assert table.current("5") is None
        assert len(caplog.records) == 1 and "researcher table not read" in caplog.text
        table.follow("6")  # the identities moved on: worth another try
        table.wait(10)
        assert len(caplog.records) == 2
