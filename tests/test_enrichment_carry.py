"""Enrichment survives a new arXiv version and a re-import (recorded OpenAlex response)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.enrichment import AFFILIATIONS_KEY
from papersift.engine.institutions import affiliations
from papersift.indexer.enrich_run import enrich_files
from tests.corpus import make_config
from tests.test_enrich import OA_WORK, PAPERS


@pytest.fixture
def enriched(tmp_path: Path) -> Iterator[tuple[DataDir, Paper]]:
    d = DataDir(make_config(tmp_path))
    d.store.upsert(PAPERS)
    enrich_files(d, [OA_WORK])
    docid = d.store.docid_of(PAPERS[0].arxiv_id)
    assert docid is not None
    stored = d.store.get([docid])[docid]
    assert stored.citation_count == 962 and any(a.ids for a in stored.authors)
    try:
        yield d, stored
    finally:
        d.close()


def _current(d: DataDir, arxiv_id: str) -> Paper:
    docid = d.store.docid_of(arxiv_id)
    assert docid is not None
    return d.store.get([docid])[docid]


def test_reimporting_the_unenriched_record_changes_nothing(
    enriched: tuple[DataDir, Paper],
) -> None:
    d, stored = enriched
    counts, changed = d.store.upsert([PAPERS[0]])  # as a snapshot would bring it again
    assert (counts.unchanged, changed) == (1, [])
    assert _current(d, PAPERS[0].arxiv_id) == stored


def test_a_new_version_keeps_citations_ids_and_affiliations(
    enriched: tuple[DataDir, Paper],
) -> None:
    d, stored = enriched
    v2 = replace(
        PAPERS[0], version=2, title=PAPERS[0].title + " (revised)", updated=date(2019, 1, 1)
    )
    counts, _ = d.store.upsert([v2])
    assert counts.updated == 1
    now = _current(d, v2.arxiv_id)
    assert (now.version, now.title) == (2, v2.title)
    assert now.citation_count == stored.citation_count
    assert [a.ids for a in now.authors] == [a.ids for a in stored.authors]
    assert affiliations(now) == affiliations(stored)


def test_affiliations_follow_reordered_authors_and_drop_removed_ones(
    enriched: tuple[DataDir, Paper],
) -> None:
    d, stored = enriched
    if not affiliations(stored):
        pytest.skip("the recorded work carries no institution for our authors")
    first, *rest = stored.authors
    bare = tuple(replace(a, ids=()) for a in rest[::-1])  # first author gone, rest reversed
    v2 = replace(PAPERS[0], version=2, authors=bare)
    d.store.upsert([v2])
    now = _current(d, v2.arxiv_id)
    by_key_before = {stored.authors[p].key: r for p, r, _ in affiliations(stored)}
    by_key_after = {now.authors[p].key: r for p, r, _ in affiliations(now)}
    by_key_before.pop(first.key, None)
    assert by_key_after == by_key_before
    assert [a.ids for a in now.authors] == [a.ids for a in rest[::-1]]
    raw = dict(now.extra).get(AFFILIATIONS_KEY, "[]")
    assert all(0 <= p < len(now.authors) for p, _, _ in json.loads(raw))


def test_a_newer_enrichment_wins_over_the_carried_one(enriched: tuple[DataDir, Paper]) -> None:
    d, _ = enriched
    v2 = replace(PAPERS[0], version=2, citation_count=1000)
    d.store.upsert([v2])
    assert _current(d, v2.arxiv_id).citation_count == 1000
