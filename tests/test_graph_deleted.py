"""A deleted paper's graph rows go with it: SQLite gives the highest docid again to the next
paper added, which must not inherit the deleted paper's references, citers or identifiers
(recorded Semantic Scholar response of tests/test_graph.py)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from papersift.core.authors import parse_authors
from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.enrich_run import enrich_files
from tests.corpus import make_config
from tests.test_graph import S2_LINKS, TURING, _papers


def test_a_reused_docid_inherits_no_edges(tmp_path: Path) -> None:
    data = DataDir(make_config(tmp_path))
    papers = _papers()
    turing = next(p for p in papers if p.arxiv_id == TURING)
    data.store.upsert([p for p in papers if p is not turing] + [turing])  # Turing: last docid
    data.sync_lexical()
    enrich_files(data, [S2_LINKS])
    g = data.graph
    old = data.store.docid_of(TURING)
    assert old is not None and len(g.references(old)) == 2 and len(g.citations(old)) == 8
    citers = g.citations(old)
    before = g.generation

    assert data.store.delete([TURING]) == [old]
    g.refresh()
    assert g.generation != before  # the cached answers that held its edges are stale
    newcomer = Paper(
        "1803.00001", 1, "An unrelated paper", "Nothing cites it.", parse_authors("N. Body"),
        ("cs.AI",), date(2018, 3, 2), date(2018, 3, 2),
    )  # fmt: skip
    data.store.upsert([newcomer])
    data.sync_lexical()
    assert data.store.docid_of("1803.00001") == old  # SQLite gave the docid again
    assert (
        g.references(old) == []
        and g.citations(old) == []
        and g.keys(old) == [("arxiv", "1803.00001")]
    )
    counts = g.counts(old)
    assert counts.empty
    for citer in citers:  # what the citers were said to cite is no paper here any more
        assert old not in g.references(citer)
    engine = SearchEngine(data)
    try:
        assert engine.search(SearchRequest("cites:1803.00001")).total == 0
        assert engine.search(SearchRequest("citedby:1803.00001")).total == 0
        hood = engine.neighbourhood("1803.00001")
        assert hood is not None and hood.neighbours == ()
    finally:
        engine.close()
