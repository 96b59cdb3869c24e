"""Sorted by date or citations, a two-word query's keyword matches hold the words at most two
apart, in either order, while ``[search] match_all_sorted_from`` papers hold them so
(``engine.near_words``); relevance order keeps every paper holding both.

At 663k papers "community detection" newest first listed scam detection and code-mixed
benchmarks. Real index (the session's ~320 demo papers); the expected sets are Tantivy
queries written by hand.
"""

from __future__ import annotations

import re

from papersift.core.config import Config
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from tests.search_checks import engine_with
from tests.test_rarest_word import docids, every_id, matches

QUERY = "information retrieval"
# Both words, each in its own forms (``engine.word_forms``), as relevance order matches them.
BOTH = (
    "+(words:information words:informations au:information) "
    "+(words:retrieval words:retrievals au:retrieval)"
)
NEAR = f'{BOTH} +("information retrieval"~2 "retrieval information"~2)'


def test_the_sample_suits_the_query(engine: SearchEngine) -> None:
    lex = engine.data.lexical
    near, both = matches(lex, NEAR), matches(lex, BOTH)
    assert len(near) >= 5 and len(both) > len(near) + 5 and near < both


def test_newest_first_the_words_stand_near_each_other(
    engine: SearchEngine, built_config: Config
) -> None:
    lex = engine.data.lexical
    near, both = matches(lex, NEAR), matches(lex, BOTH)
    with engine_with(built_config, match_all_sorted_from=len(near)) as eng:
        for sort in ("newest", "oldest"):  # the sample has no citation counts
            request = SearchRequest(QUERY, mode="keyword", sort=sort)  # type: ignore[arg-type]
            assert docids(eng, every_id(eng, request)) == near, sort
        note = next(w for w in eng.search(request).warnings if w.startswith("sorted by"))
        assert f"{len(both) - len(near):,} more papers hold the two words farther apart" in note
        relevance = SearchRequest(QUERY, mode="keyword")
        assert docids(eng, every_id(eng, relevance)) == both


def test_too_few_papers_holding_them_near_keep_the_list_before(
    engine: SearchEngine, built_config: Config
) -> None:
    lex = engine.data.lexical
    near, both = matches(lex, NEAR), matches(lex, BOTH)
    request = SearchRequest(QUERY, mode="keyword", sort="newest")
    with engine_with(built_config, match_all_sorted_from=len(near) + 1) as eng:
        assert docids(eng, every_id(eng, request)) == both
    with engine_with(built_config, match_all_sorted_from=0) as off:
        assert docids(off, every_id(off, request)) == both


def test_a_hybrid_list_counts_what_it_leaves_out(
    engine: SearchEngine, built_config: Config
) -> None:
    """Hybrid's keyword side is the same set, and relevance order's total is the list's plus
    what the note counts, each paper once."""
    near = matches(engine.data.lexical, NEAR)
    with engine_with(built_config, match_all_sorted_from=len(near)) as eng:
        result = eng.search(SearchRequest(QUERY, mode="hybrid", sort="newest", page_size=100))
        note = next(w for w in result.warnings if w.startswith("sorted by"))
        assert "hold the two words farther apart" in note
        assert near <= docids(eng, [h.paper.arxiv_id for h in result.hits])
        counted = sum(int(m.replace(",", "")) for m in re.findall(r"([\d,]+) more papers", note))
        relevance = eng.search(SearchRequest(QUERY, mode="hybrid"))
        assert relevance.total == result.total + counted > result.total
