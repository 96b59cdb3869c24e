"""A facet's count is what clicking it gives: a filter only narrows the match set, in every
mode (the semantic side's gate, band, z-score cut and candidate cut are those of the
unfiltered search)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from papersift.core.config import Config
from papersift.engine.match import MatchRule
from papersift.engine.ranking import Ranking
from papersift.engine.results import Filters, Mode, SearchRequest
from papersift.engine.search import SearchEngine, open_engine
from papersift.engine.semantic_side import SemanticReference, semantic_matches

QUERIES = ("language model", "parsing", "citation analysis", "speech recognition", "SVM")


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_a_facet_count_is_what_clicking_it_gives(engine: SearchEngine, mode: Mode) -> None:
    checked = 0
    for q in QUERIES:
        r = engine.search(SearchRequest(q, mode=mode))
        for f in r.facets["categories"][:4]:
            clicked = engine.search(
                SearchRequest(q, mode=mode, filters=Filters(categories=(f.value,)))
            )
            assert clicked.total == f.count, (q, f.value)
            checked += 1
        for f in r.facets["years"][:3]:
            year = int(f.value)
            span = Filters(date_from=date(year, 1, 1), date_to=date(year, 12, 31))
            clicked = engine.search(SearchRequest(q, mode=mode, filters=span))
            assert clicked.total == f.count, (q, year)
            checked += 1
    assert checked > 20


def test_a_facet_count_holds_when_the_candidates_are_cut(built_config: Config) -> None:
    """With fewer candidates than matching papers, the unfiltered list ends at some
    similarity; a filtered search admits nothing below it, as the facet counted. (No
    z-score rule, which would stop most of these lists before the candidates run out.)"""
    search = replace(built_config.search, candidates=30, semantic_zscore=0.0)
    few = replace(built_config, search=search)
    with open_engine(few) as engine:
        cut = 0
        for q in QUERIES:
            r = engine.search(SearchRequest(q, mode="semantic"))
            cut += r.total == 30  # the candidates ran out before the rule did
            for f in r.facets["categories"][:4]:
                only = Filters(categories=(f.value,))
                clicked = engine.search(SearchRequest(q, mode="semantic", filters=only))
                assert clicked.total == f.count, (q, f.value)
        assert cut >= 2


def test_the_semantic_rule_of_a_filtered_search_is_the_unfiltered_ones() -> None:
    rule = MatchRule(floor=0.2, gate=0.35, band=0.3)
    pairs = [(1, 0.5), (2, 0.4), (3, 0.3), (4, 0.25)]
    ranked = Ranking.from_pairs(pairs)

    def matches(reference: SemanticReference | None = None) -> list[tuple[int, float]]:
        return semantic_matches(ranked, rule, reference).pairs()

    assert matches() == pairs  # best 0.5: the floor cuts
    # Inside the filter the best is 0.5, unfiltered it was 0.7: the band cuts at 0.4.
    assert matches(SemanticReference(0.7, None)) == pairs[:2]
    # The unfiltered candidates were cut at 0.3: nothing below it matched there.
    assert matches(SemanticReference(0.5, 0.3)) == pairs[:3]
    # The unfiltered best is under the gate: nothing matches.
    assert matches(SemanticReference(0.3, None)) == []
    assert matches(SemanticReference(None, None)) == []
