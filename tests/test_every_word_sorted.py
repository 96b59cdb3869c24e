"""Sorted by date or citations, a query of more free words than ``match_all_up_to`` needs
every one of them while ``[search] match_all_sorted_from`` papers hold them all
(``engine.rarer_words``); with fewer, the rarer-words rule applies as before.

At 663k papers of every field no word is common enough for the rarer-words rule, so
"quantum error correction code" sorted by date listed papers on error-correcting codes for
anything, 1 of the newest 24 about quantum. Real index (the session's ~320 demo papers);
the expected sets are Tantivy queries written by hand.
"""

from __future__ import annotations

import re

import pytest

from papersift.core.config import Config
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from tests.search_checks import engine_with
from tests.test_rarest_word import all_of, docids, every_id, matches, pairs_of

WORDS = ("language", "model", "evaluation", "text")  # four: three needed, with "text" (rarest)
QUERY = " ".join(WORDS)
# Each word in its own forms, as a list that needs every word holds it (``engine.word_forms``:
# "evaluation" is not "evaluated", though both stem to "evalu").
FORMS = {
    "language": ("language", "languages"),
    "model": ("model", "models", "modeled", "modeling", "modelled", "modelling"),
    "evaluation": ("evaluation", "evaluations"),
    "text": ("text", "texts"),
}
EVERY = " ".join(
    f"+({' '.join(f'words:{f}' for f in forms)} au:{word})" for word, forms in FORMS.items()
)


def loose(engine: SearchEngine) -> set[int]:
    """Relevance order's matches: "text" and two of the others."""
    return matches(engine.data.lexical, f'+"text" +({pairs_of(WORDS[:3])})')


def test_the_sample_suits_the_query(engine: SearchEngine) -> None:
    every = matches(engine.data.lexical, EVERY)
    assert len(every) > 3 and every < matches(engine.data.lexical, all_of(WORDS)) < loose(engine)


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_sorted_lists_need_every_word_while_enough_papers_hold_them(
    engine: SearchEngine, built_config: Config, sort: str
) -> None:
    every = matches(engine.data.lexical, EVERY)
    left = len(loose(engine)) - len(every)
    with engine_with(built_config, match_all_sorted_from=len(every)) as eng:
        request = SearchRequest(QUERY, mode="keyword", sort=sort)  # type: ignore[arg-type]
        assert docids(eng, every_id(eng, request)) == every
        note = next(w for w in eng.search(request).warnings if w.startswith("sorted by"))
        assert note.endswith(
            f"{left:,} more papers hold only some of the query's words (relevance order "
            "lists them too)"
        )
        # Relevance order keeps its count.
        relevance = SearchRequest(QUERY, mode="keyword")
        assert docids(eng, every_id(eng, relevance)) == loose(engine)
        # A filter narrows the set the query chose, whatever it leaves: a facet's count is
        # what clicking it gives.
        facets = eng.search(request).facets["categories"]
        small = min(facets, key=lambda c: c.count)
        narrowed = SearchRequest(QUERY, mode="keyword", sort="newest",
                                 filters=Filters(categories=(small.value,)))  # fmt: skip
        got = docids(eng, every_id(eng, narrowed))
        assert len(got) == small.count < len(every) and got <= every


def test_too_few_papers_holding_every_word_keep_the_rule_before(
    engine: SearchEngine, built_config: Config
) -> None:
    """One paper fewer than the setting asks: the four-word rule (the rarest word and two
    others), as relevance order."""
    every = matches(engine.data.lexical, EVERY)
    with engine_with(built_config, match_all_sorted_from=len(every) + 1) as eng:
        request = SearchRequest(QUERY, mode="keyword", sort="newest")
        assert docids(eng, every_id(eng, request)) == loose(engine)
    with engine_with(built_config, match_all_sorted_from=0) as off:
        assert docids(off, every_id(off, request)) == loose(engine)


def test_hybrid_lists_by_words_need_every_word(engine: SearchEngine, built_config: Config) -> None:
    """In hybrid mode the keyword side of a date-sorted list is the same set (the papers
    matching by meaning alone are ``semantic_zscore_sorted``'s), and the note says so."""
    every = matches(engine.data.lexical, EVERY)
    with engine_with(built_config, match_all_sorted_from=len(every)) as eng:
        result = eng.search(SearchRequest(QUERY, mode="hybrid", sort="newest", page_size=100))
        note = next(w for w in result.warnings if w.startswith("sorted by"))
        assert "more papers hold only some of the query's words" in note
        listed = docids(eng, [h.paper.arxiv_id for h in result.hits])
        assert every <= listed
        # Relevance order's total is this list's plus what the note counts, each paper once.
        counted = sum(int(m.replace(",", "")) for m in re.findall(r"([\d,]+) more papers", note))
        relevance = eng.search(SearchRequest(QUERY, mode="hybrid"))
        assert relevance.total == result.total + counted > result.total
    with engine_with(built_config, match_all_sorted_from=0) as off:
        result = off.search(SearchRequest(QUERY, mode="hybrid", sort="newest", page_size=100))
        assert loose(engine) <= docids(off, [h.paper.arxiv_id for h in result.hits])
