"""A DOI finds its paper by an index seek, whichever ``papers_doi`` the store was made with
(``engine.store_rows.DOI_INDEX``, replaced on open by ``make_indexes``): the direct-DOI
query (``PaperStore.docid_of_doi``) and references by DOI (``engine.graph``) both.
``doi = ? COLLATE NOCASE`` against the graph's ``lower(doi)`` index read the whole index at
663k papers (0.4-1.2 s a query).

Real SQLite stores; the statements are the ones the store runs (caught with SQLite's trace
callback) and their plans come from ``EXPLAIN QUERY PLAN``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import date
from pathlib import Path

import pytest

from papersift.core.paper import Author, Paper
from papersift.engine.graph import Graph, WorkLinks
from papersift.engine.store import PaperStore
from papersift.engine.store_rows import DOI_INDEX, SCHEMA

DOI = "10.1103/PhysRevA.100.010101"

# ``papers_doi`` as each papersift made it: none yet (a new directory), the graph's (stores
# made before 9bad418, the 663k one among them), and on ``doi COLLATE NOCASE`` (9bad418 on).
MADE_WITH = {
    "new": None,
    "graph": "CREATE INDEX papers_doi ON papers(lower(doi)) WHERE doi IS NOT NULL",
    "nocase": "CREATE INDEX papers_doi ON papers(doi COLLATE NOCASE)",
}


def _paper(arxiv_id: str, doi: str | None) -> Paper:
    return Paper(
        arxiv_id=arxiv_id, version=1, title=f"Paper {arxiv_id}", abstract="An abstract.",
        authors=(Author("Ada Lovelace", "ada lovelace"),), categories=("quant-ph",),
        published=date(2019, 7, 1), updated=date(2019, 7, 1), doi=doi,
    )  # fmt: skip


def _store(tmp_path: Path, made: str) -> PaperStore:
    """A store of three papers whose ``papers_doi`` was made as ``made`` says, reopened."""
    path = tmp_path / "papers.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA)
        db.execute("DROP INDEX IF EXISTS papers_doi")
        if (index := MADE_WITH[made]) is not None:
            db.execute(index)
        db.commit()
    store = PaperStore(path)
    store.upsert([_paper("1907.00001", DOI), _paper("1907.00002", None),
                  _paper("1907.00003", "10.1000/other")])  # fmt: skip
    store.close()
    return PaperStore(path)


def _plans(store: PaperStore, run: Callable[[], object], marker: str) -> list[str]:
    """The query plan of each statement containing ``marker`` that ``run`` executes."""
    seen: list[str] = []
    with store.reading() as db:
        db.set_trace_callback(seen.append)
    try:
        run()
    finally:
        with store.reading() as db:
            db.set_trace_callback(None)
    statements = [s for s in seen if marker in s]
    assert statements, f"no statement with {marker!r} ran"
    with store.reading() as db:
        return [" | ".join(str(r[3]) for r in db.execute("EXPLAIN QUERY PLAN " + s))
                for s in statements]  # fmt: skip


@pytest.mark.parametrize("made", sorted(MADE_WITH))
def test_a_doi_lookup_seeks_the_index_and_ignores_case(tmp_path: Path, made: str) -> None:
    store = _store(tmp_path, made)
    try:
        with store.reading() as db:
            (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'papers_doi'")
        assert sql == (DOI_INDEX,)  # an older definition was replaced on open
        wanted = store.docid_of("1907.00001")
        for form in (DOI, DOI.lower(), DOI.upper()):
            assert store.docid_of_doi(form) == wanted
        assert store.docid_of_doi("10.1103/PhysRevA.100.010102") is None
        for plan in _plans(store, lambda: store.docid_of_doi(DOI.lower()), "doi"):
            assert plan.startswith("SEARCH papers USING INDEX papers_doi"), plan
    finally:
        store.close()


@pytest.mark.parametrize("made", sorted(MADE_WITH))
def test_a_reference_by_doi_resolves_by_the_index(tmp_path: Path, made: str) -> None:
    store = _store(tmp_path, made)
    try:
        graph = Graph(store)
        citing, cited = store.docid_of("1907.00003"), store.docid_of("1907.00001")
        assert citing is not None and cited is not None
        ref = (("doi", DOI.lower()),)
        assert graph.replace(citing, [WorkLinks("openalex", (), (ref,))])
        assert graph.references(citing) == [cited]
        for plan in _plans(store, lambda: graph.references(citing), "lower(doi)"):
            assert plan.startswith("SEARCH papers USING INDEX papers_doi"), plan
    finally:
        store.close()


def test_a_read_only_store_is_left_as_it_is(tmp_path: Path) -> None:
    store = _store(tmp_path, "new")
    store.close()
    path = tmp_path / "papers.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute("DROP INDEX papers_doi")
        db.execute(MADE_WITH["nocase"])
        db.commit()
    readonly = PaperStore(path, readonly=True)
    try:
        assert readonly.docid_of_doi(DOI.upper()) == readonly.docid_of("1907.00001")
        with readonly.reading() as db:
            (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'papers_doi'")
        assert sql == (MADE_WITH["nocase"],)
    finally:
        readonly.close()
