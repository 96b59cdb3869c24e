"""The researcher directory pages through one order kept per researcher generation
(``engine.researcher_order``): each page lists what ``ORDER BY papers DESC, name`` listed,
in the same order, with ties of (papers, name) newest id first; a page costs neither a count
nor a sort of the listed researchers (at 663k papers those took 0.5 s and 5 s a page), and
reading the order walks ``researchers_listed``, made when the store was opened for writing;
a refresh that rewrites identities without new papers (a changed lab declaration) is seen.

Real stores: the session's demo index, and the lab test's papers clustered for real."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.people import People
from papersift.engine.researcher_order import ORDER_READ
from papersift.engine.store import PaperStore
from papersift.indexer.identity_refresh import refresh_identities, refresh_people
from papersift.indexer.snapshot import record_to_paper
from tests.corpus import demo_records
from tests.test_lab import BORNMANN, OTHER, _with_orcid, lab_config, members_toml

PAGE = 7


def _reference(path: Path) -> list[int]:
    """The listed researchers sorted in Python: most papers, then name (SQLite compares
    text as UTF-8 bytes, Python by code point: the same order), then the newer id."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT rid, name, papers FROM researchers WHERE papers > 0 AND merged_into IS NULL"
        ).fetchall()
    return [r for r, _, _ in sorted(rows, key=lambda r: (-r[2], r[1], -r[0]))]


def _old_pages(path: Path, limit: int) -> list[list[tuple[int, str]]]:
    """(papers, name) of each page as the query before the kept order listed it."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        (total,) = db.execute(
            "SELECT COUNT(*) FROM researchers WHERE papers > 0 AND merged_into IS NULL"
        ).fetchone()
        return [
            db.execute(
                "SELECT papers, name FROM researchers WHERE papers > 0 AND merged_into IS NULL "
                "ORDER BY papers DESC, name LIMIT ? OFFSET ?",
                (limit, offset),
            ).fetchall()
            for offset in range(0, total, limit)
        ]


def _pages(people: People, limit: int) -> tuple[list[list[int]], int]:
    pages: list[list[int]] = []
    total = -1
    while total < 0 or len(pages) * limit < total:
        found, total = people.search("", limit, len(pages) * limit)
        pages.append([r.rid for r in found])
    return pages, total


def test_every_page_lists_what_the_sorted_query_did(built_config: Config) -> None:
    path = built_config.data_dir / "papers.sqlite"
    store = PaperStore(path, readonly=True)
    try:
        people = People(store)
        pages, total = _pages(people, PAGE)
        expected = _reference(path)
        assert len(expected) > 10 * PAGE and total == len(expected)
        assert [r for page in pages for r in page] == expected
        shown = people.many(expected)
        old = _old_pages(path, PAGE)
        assert [[(shown[r].papers, shown[r].name) for r in page] for page in pages] == old
        # Past the end: nothing, and the total still.
        assert people.search("", PAGE, total + 3 * PAGE) == ([], total)
    finally:
        store.close()


def test_a_page_neither_counts_nor_sorts_the_researchers(built_config: Config) -> None:
    store = PaperStore(built_config.data_dir / "papers.sqlite", readonly=True)
    try:
        with store.reading() as db:  # the order is one walk of the index, no sort
            plan = [str(r[3]) for r in db.execute("EXPLAIN QUERY PLAN " + ORDER_READ)]
        assert plan == ["SEARCH researchers USING INDEX researchers_listed (papers>?)"]
        people = People(store)
        people.search("", PAGE)  # the order is read once for this generation
        ran: list[str] = []
        with store.reading() as db:
            db.set_trace_callback(ran.append)
        for offset in (0, 5 * PAGE, 10 * PAGE):
            found, total = people.search("", PAGE, offset)
            assert len(found) == PAGE and total > 10 * PAGE
        with store.reading() as db:
            db.set_trace_callback(None)
        assert ran, "the store's connection ran nothing"
        costly = [s for s in ran if "COUNT(" in s.upper() or "ORDER BY" in s.upper()]
        assert costly == []
    finally:
        store.close()


def test_an_identity_refresh_without_new_papers_is_seen(tmp_path: Path) -> None:
    wanted = ("1007.4749", "1101.3863", "1103.3216", "1102.3862")
    papers = [record_to_paper(r) for r in demo_records() if r["id"] in wanted]
    # A namesake with another ORCID: declaring the lab's member splits it off.
    papers = [_with_orcid(p, "Lutz Bornmann", OTHER) if p.arxiv_id == "1102.3862" else p
              for p in papers]  # fmt: skip
    data = DataDir(lab_config(tmp_path, ""))
    try:
        data.store.upsert(papers)
        refresh_people(data)
        path = data.store.path
        before, total = data.people.search("", 1000)
        assert [r.rid for r in before] == _reference(path) and total == len(before)
        seq = data.store.seq
        lab = lab_config(
            tmp_path, f'[lab]\nname = "Lab"\n{members_toml(("Lutz Bornmann", BORNMANN))}'
        )
        assert refresh_identities(data.store, lab=lab.lab).blocks
        assert data.store.seq == seq  # no paper changed: only the identities did
        after, total = data.people.search("", 1000)
        assert [r.rid for r in after] == _reference(path) and total == len(after)
        assert after != before
    finally:
        data.close()
