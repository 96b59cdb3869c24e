"""What ``/sitemap.xml`` reads to date its chunks, made cheap at 663k papers (a first answer
took 10 s there): the papers' update dates come from the ``papers_updated`` index, not a
pass over the wide rows; the researchers' chunks from two index reads and numpy
(``engine.people_sitemap``); each category's newest paper from one top-1 pass, not a search
with facets (``Catalog.newest_published``). Each answer is checked against the query it
replaced, on the session's real index."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import date
from pathlib import Path

import pytest

from papersift.core.config import Config
from papersift.engine.people_sitemap import chunk_dates
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.store import PaperStore
from papersift.engine.store_rows import SCHEMA, UPDATED_INDEX
from tests.test_doi_index import _paper


def _old_researcher_chunks(path: Path, size: int) -> list[tuple[int, date | None]]:
    """The researchers' chunks as the join of authorships to papers dates them."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        chunks = sorted(
            int(k)
            for (k,) in db.execute(
                "SELECT DISTINCT (rid - 1) / ? FROM researchers "
                "WHERE papers > 0 AND merged_into IS NULL",
                (size,),
            )
        )
        out = []
        for k in chunks:
            (newest,) = db.execute(
                "SELECT MAX(p.updated) FROM authorships a JOIN papers p ON p.docid = a.docid "
                "WHERE a.rid BETWEEN ? AND ?",
                (k * size + 1, (k + 1) * size),
            ).fetchone()
            out.append((k, date.fromisoformat(newest) if newest else None))
    return out


@pytest.mark.parametrize("size", [1, 7, 50_000])
def test_researcher_chunks_are_dated_as_the_join_dated_them(
    built_config: Config, size: int
) -> None:
    path = built_config.data_dir / "papers.sqlite"
    expected = _old_researcher_chunks(path, size)
    assert len(expected) >= (20 if size < 10 else 1)
    assert chunk_dates(path, size) == expected


def test_each_category_is_dated_by_its_newest_paper(engine: SearchEngine) -> None:
    cats = [f.value for f in engine.stats().categories]
    archives = sorted({c.split(".", 1)[0] for c in cats} - set(cats))
    found = engine.newest_published([*archives, *cats, "no-such.CAT"])
    assert found["no-such.CAT"] is None
    for cat in [*archives, *cats]:
        request = SearchRequest(
            mode="keyword", filters=Filters(categories=(cat,)), sort="newest", page_size=1
        )
        hits = engine.search(request).hits
        assert hits, cat
        assert found[cat] == hits[0].paper.published, cat


def test_the_papers_dates_are_read_from_their_index(tmp_path: Path) -> None:
    path = tmp_path / "papers.sqlite"
    with closing(sqlite3.connect(path)) as db:  # as a store made before the index
        db.executescript(SCHEMA)
    store = PaperStore(path)  # opened for writing: the index is made
    try:
        store.upsert([_paper(f"1907.0000{i}", None) for i in range(1, 4)])
        with store.reading() as db:
            (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'papers_updated'")
            assert sql == (UPDATED_INDEX,)
            ran: list[str] = []
            db.set_trace_callback(ran.append)
        assert [k for k, _ in store.sitemap_chunks(2)] == [0, 1]
        assert store.newest_updated() == date(2019, 7, 1)
        with store.reading() as db:
            db.set_trace_callback(None)
            plans = [
                " | ".join(str(r[3]) for r in db.execute("EXPLAIN QUERY PLAN " + s))
                for s in ran
                if "updated" in s
            ]
        assert len(plans) == 2
        assert all("COVERING INDEX papers_updated" in p for p in plans), plans
    finally:
        store.close()
