"""Lookups of many keys at once go to SQLite in batches of ``IN (...)`` lists; every key is
found whichever batch it falls in (real store, real papers of the demo slice)."""

from __future__ import annotations

from pathlib import Path

from papersift.engine.sql_batches import BATCH, in_batches
from papersift.engine.store import PaperStore
from papersift.indexer.snapshot import record_to_paper
from tests.corpus import demo_records


def test_batches_cover_every_value_in_order() -> None:
    values = list(range(2 * BATCH + 1))
    batches = list(in_batches(values))
    assert [len(chunk) for _, chunk in batches] == [BATCH, BATCH, 1]
    assert [v for _, chunk in batches for v in chunk] == values
    assert all(marks == ",".join("?" * len(chunk)) for marks, chunk in batches)
    assert list(in_batches([])) == []


def test_store_lookups_across_batches(tmp_path: Path) -> None:
    by_id = {}
    for record in demo_records()[: BATCH + 100]:
        paper = record_to_paper(record)
        by_id.setdefault(paper.arxiv_id, paper)  # the slice holds a few ids twice
    papers = list(by_id.values())
    assert len(papers) > BATCH
    store = PaperStore(tmp_path / "papers.sqlite")
    try:
        store.upsert(papers)
        ids = [p.arxiv_id for p in papers]
        docids = [store.docid_of(a) for a in ids]
        assert None not in docids
        got = store.get([d for d in docids if d is not None])
        assert sorted(p.arxiv_id for p in got.values()) == sorted(ids)
        assert store.versions(ids) == {p.arxiv_id: p.version for p in papers}
        assert set(store.text_hashes([d for d in docids if d is not None])) == set(docids)
    finally:
        store.close()
