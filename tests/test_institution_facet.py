"""The institutions facet from the facet table against Tantivy's own count of the ``inst``
field, on real papers given affiliations, and following the store's changes."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from papersift.core.config import Config
from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.enrichment import AFFILIATIONS_KEY
from papersift.engine.facet_table import INSTITUTION_COLUMNS, FacetTable
from papersift.engine.institutions import affiliation_rors
from papersift.engine.result_cache import ResultCache
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine
from papersift.indexer.build import index_backlog
from papersift.indexer.snapshot import record_to_paper
from tests.corpus import make_config, sample_records

ROR_IDS = [f"0{i:03d}abc{i % 10}5" for i in range(14)]


def _affiliated(paper: Paper, rors: list[str]) -> Paper:
    raw = json.dumps([[k, r, f"Institute {r}"] for k, r in enumerate(rors)])
    return dataclasses.replace(paper, extra=((AFFILIATIONS_KEY, raw),) if rors else ())


def _papers(rng: random.Random) -> list[Paper]:
    """Sample papers with 0 to 9 affiliations each (a ROR id may repeat within a paper; some
    have more than the array's columns), drawn from few ids so counts tie."""
    out = []
    for record in sample_records():
        n = rng.choice([0, 0, 1, 2, 3, INSTITUTION_COLUMNS + 1, 9])
        out.append(_affiliated(record_to_paper(record), [rng.choice(ROR_IDS) for _ in range(n)]))
    return out


def _tantivy(data: DataDir, ids: list[int], size: int) -> tuple[object, ...]:
    lex = data.lexical
    return lex.facets(lex.docids_for(ids), size, ("institutions",))["institutions"]


def _live(data: DataDir) -> list[int]:
    with data.store.reading() as db:
        return [d for (d,) in db.execute("SELECT docid FROM papers ORDER BY docid")]


def test_counts_equal_tantivys_and_follow_the_store(fresh_config: Config) -> None:
    rng = random.Random(11)
    papers = _papers(rng)
    data = DataDir(fresh_config)
    try:
        data.store.upsert(papers)
        data.sync_lexical()
        table = FacetTable(data.store.path)
        table.build()
        docids = _live(data)
        assert len(docids) > 100
        assert any(len(affiliation_rors(p)) > INSTITUTION_COLUMNS for p in papers)
        for n in (1, 7, 60, len(docids)):
            ids = rng.sample(docids, n)
            for size in (3, 30):
                assert table.institutions(ids, size) == _tantivy(data, ids, size), (n, size)
        assert table.institutions(docids)  # not vacuous

        # One paper loses its affiliations, one gains many, one is deleted.
        lose, gain, gone = _three(papers)
        data.store.upsert([
            dataclasses.replace(_affiliated(lose, []), version=lose.version + 1),
            dataclasses.replace(_affiliated(gain, ROR_IDS[:8]), version=gain.version + 1),
        ])  # fmt: skip
        data.store.delete([gone.arxiv_id])
        data.sync_lexical()
        assert table.current(data.store.seq) is table
        docids = _live(data)
        for size in (3, 30):
            assert table.institutions(docids, size) == _tantivy(data, docids, size)
        changed = [data.store.docid_of(p.arxiv_id) for p in (lose, gain)]
        assert table.institutions([d for d in changed if d is not None]) == _tantivy(
            data, [d for d in changed if d is not None], 30
        )
    finally:
        data.close()


def _three(papers: list[Paper]) -> tuple[Paper, Paper, Paper]:
    with_rors = [p for p in papers if p.extra]
    return with_rors[0], with_rors[1], with_rors[2]


@pytest.fixture(scope="module")
def enriched(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """The sample papers with affiliations, embedded. Treat as read-only."""
    config = make_config(tmp_path_factory.mktemp("enriched"))
    data = DataDir(config)
    try:
        data.store.upsert(_papers(random.Random(5)))
        data.sync_lexical()
        index_backlog(data)
    finally:
        data.close()
    return config


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "semantic"])
def test_search_counts_institutions_alike_before_and_after_the_table(
    enriched: Config, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = open_engine(enriched)
    engine.cache = ResultCache(0)
    try:
        requests = [
            SearchRequest(q, mode=mode)
            for q in ("learning", "language models", "neural machine translation")
        ]
        with monkeypatch.context() as m:
            m.setattr(engine.facet_table, "current", lambda seq: None)
            by_tantivy = [engine.search(r).facets["institutions"] for r in requests]
        engine.facet_table.start()
        assert engine.facet_table.wait(timeout=60)
        by_table = [engine.search(r).facets["institutions"] for r in requests]
        assert by_table == by_tantivy
        assert sum(map(len, by_table)) >= 10  # not vacuous
    finally:
        engine.close()
