"""Sorted by date, a long query's matches must hold its rarer words (``[search]
match_common_above_sorted``, ``engine.rarer_words``), and a hyphenated word's parts together.

Five free words need three, any three. Sorted by date, the words a paper holds must be the
query's rarer ones while it has enough: words in more than a fifth of the papers count only
after those. A hyphenated word is its parts, each optional; sorted by date they must stand
together. Relevance order keeps the plain count, and the answer says how many papers the
date order leaves out. Real index (the session's demo sample), over HTTP for the API; the
expected sets are Tantivy queries written by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from itertools import combinations

import httpx
import numpy as np
import pytest

from papersift.core.config import Config
from papersift.engine.match import MatchRule, keyword_query
from papersift.engine.query import parse_user_query
from papersift.engine.rarer_words import clause_holds, rarer_words
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from tests.search_checks import engine_with
from tests.test_rarest_word import all_of, docids, every_id, matches

pytest_plugins = ["tests.web_fixtures"]

COMMON = ("language", "model", "paper")  # each in over a third of the sample's papers
RARER = ("translation", "speech")  # each in under a fifth
QUERY = " ".join((*COMMON, *RARER))
HYPHENATED = "fine-tuning"  # 17 of the sample's papers write it; more hold "fine" or "tuning"
APART = "large-scale"  # 19 papers write it, 12 more hold "large" and "scale" apart


def any_of(groups: list[list[str]]) -> str:
    """Papers holding every word of at least one of ``groups``."""
    return " ".join(all_of(g) for g in groups)


def three_of_five() -> str:
    return any_of([list(c) for c in combinations((*COMMON, *RARER), 3)])


@pytest.fixture(scope="module")
def without_rule(built_config: Config) -> Iterator[SearchEngine]:
    with engine_with(built_config, match_common_above_sorted=0.0) as eng:
        yield eng


def test_the_sample_suits_the_query(engine: SearchEngine) -> None:
    lex = engine.data.lexical
    assert all(lex.share(w) > 0.2 for w in COMMON)
    assert all(0 < lex.share(w) <= 0.2 for w in RARER)
    loose = matches(lex, three_of_five())
    assert loose - matches(lex, all_of(list(RARER))), "no paper the rule should leave out"


def test_sorted_by_date_the_rarer_words_count_first(
    engine: SearchEngine, without_rule: SearchEngine
) -> None:
    """Two rarer words and three common ones: a match holds three words, both rarer ones
    among them. Relevance order keeps any three of five."""
    lex = engine.data.lexical
    loose = matches(lex, three_of_five())
    strict = loose & matches(lex, all_of(list(RARER)))
    newest = docids(engine, every_id(engine, SearchRequest(QUERY, mode="keyword", sort="newest")))
    assert newest == strict and len(strict) > 2
    relevance = docids(engine, every_id(engine, SearchRequest(QUERY, mode="keyword")))
    assert relevance == loose > strict
    off = SearchRequest(QUERY, mode="keyword", sort="newest")
    assert docids(without_rule, every_id(without_rule, off)) == loose


def test_the_answer_says_how_many_it_leaves_out(engine: SearchEngine) -> None:
    lex = engine.data.lexical
    loose = matches(lex, three_of_five())
    strict = loose & matches(lex, all_of(list(RARER)))
    result = engine.search(SearchRequest(QUERY, mode="keyword", sort="oldest"))
    assert result.total == len(strict)
    assert (
        f"sorted by date, oldest first: {len(loose) - len(strict):,} more papers match fewer "
        "of the query's rarer words, counting common ones ('language', 'model', 'paper') "
        "instead (relevance order lists them too)"
    ) in result.warnings
    assert not any("rarer" in w for w in engine.search(SearchRequest(QUERY)).warnings)


@pytest.mark.parametrize(
    ("query", "filters"),
    [
        (QUERY, Filters()),
        (QUERY, Filters(categories=("cs.CL",))),
        (QUERY, Filters(date_from=date(2020, 1, 1))),
        (HYPHENATED, Filters()),
        (APART, Filters()),  # "large" and "scale" apart, or listed by meaning
        (f"{HYPHENATED} {QUERY}", Filters()),
    ],
)
def test_hybrid_leaves_out_exactly_what_its_note_says(
    engine: SearchEngine, query: str, filters: Filters
) -> None:
    """Relevance order's total is the date order's plus the papers its note counts, by
    words and by meaning, each paper once; with filters too."""
    relevance = engine.search(SearchRequest(query, mode="hybrid", filters=filters))
    newest = engine.search(SearchRequest(query, mode="hybrid", sort="newest", filters=filters))
    (note,) = [w for w in newest.warnings if w.startswith("sorted by")]
    words = re.search(r"([\d,]+) more papers (match fewer|hold)", note)
    meaning = re.search(r"([\d,]+) more papers match by meaning alone", note)
    assert words is not None or meaning is not None
    counted = sum(int(m.group(1).replace(",", "")) for m in (words, meaning) if m)
    assert relevance.total == newest.total + counted


@pytest.mark.parametrize("query", [QUERY, APART, f"{HYPHENATED} {QUERY}"])
def test_the_note_counts_alike_when_relevance_orders_matches_are_many(
    built_config: Config, query: str
) -> None:
    """With few candidates, relevance order's keyword matches are more than the search
    fetches: which papers it leaves out is then read clause by clause (``clause_holds``),
    and the totals still add up."""
    with engine_with(built_config, candidates=10) as few:
        relevance = few.search(SearchRequest(query, mode="hybrid"))
        newest = few.search(SearchRequest(query, mode="hybrid", sort="newest"))
    (note,) = [w for w in newest.warnings if w.startswith("sorted by")]
    counted = sum(int(m.replace(",", "")) for m in re.findall(r"([\d,]+) more papers", note))
    assert relevance.total == newest.total + counted > newest.total


def test_clause_holds_says_which_clauses_each_paper_matches(engine: SearchEngine) -> None:
    """The one search that tells a paper's clauses apart agrees with each clause alone."""
    lex = engine.data.lexical
    kq = keyword_query(lex, parse_user_query(QUERY), MatchRule(), categories={}, author=str)
    ids = np.asarray(sorted(matches(lex, " ".join(f'"{w}"' for w in COMMON)))[:300], np.int64)
    holds = clause_holds(lex, kq.free, ids)
    for j, word in enumerate((*COMMON, *RARER)):
        alone = matches(lex, f'"{word}"')
        assert holds[:, j].tolist() == [int(d) in alone for d in ids]
    assert holds.any(axis=0).all() and not holds.all()


def test_short_queries_and_phrases_keep_their_rules(
    engine: SearchEngine, without_rule: SearchEngine
) -> None:
    """Four words keep the rarest-word rule (``match_rarest_up_to``); a quoted phrase of
    common words is never a common word, and counts as one of the rarer."""
    request = SearchRequest(" ".join((*COMMON, RARER[0])), mode="keyword", sort="newest")
    assert every_id(engine, request) == every_id(without_rule, request) != []
    lex = engine.data.lexical
    text = f'"{COMMON[0]} {COMMON[1]}" {COMMON[2]} {RARER[0]} results {RARER[1]}'
    kq = keyword_query(lex, parse_user_query(text), MatchRule(), categories={}, author=str)
    rarer = rarer_words(lex, kq, MatchRule(rarest_up_to=4), 0.2)
    assert rarer is not None and COMMON[2] in rarer.common
    assert not any(" " in w for w in rarer.common)


def test_api_sorted_by_date(engine: SearchEngine, http: httpx.Client) -> None:
    lex = engine.data.lexical
    strict = matches(lex, three_of_five()) & matches(lex, all_of(list(RARER)))
    answer = http.get("/api/v1/search", params={"q": QUERY, "mode": "keyword", "sort": "newest"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["total"] == len(strict)
    assert docids(engine, [h["paper"]["id"] for h in body["hits"]]) <= strict
    assert any("rarer words" in w for w in body["warnings"])


def test_sorted_by_date_a_hyphenated_word_holds_its_parts_together(
    engine: SearchEngine,
) -> None:
    """ "large-scale" is "large" and "scale" anywhere, or "largescale" (``engine.hyphens``):
    sorted by date, only papers holding them together (as a phrase, any punctuation
    between, or as one word) are listed, and the note counts the rest. Relevance order
    keeps them all."""
    lex = engine.data.lexical
    loose = matches(lex, '(+"large" +"scale") "largescale"')
    strict = loose & matches(lex, '"large scale" "largescale"')
    assert len(strict) > 2 and strict < loose
    request = SearchRequest(APART, mode="keyword", sort="newest")
    result = engine.search(request)
    assert docids(engine, every_id(engine, request)) == strict
    assert (
        f"sorted by date, newest first: {len(loose) - len(strict):,} more papers hold 'large' "
        "and 'scale' but not 'large-scale' (relevance order lists them too)"
    ) in result.warnings
    relevance = SearchRequest(APART, mode="keyword")
    assert docids(engine, every_id(engine, relevance)) == loose
    assert not any("large-scale'" in w for w in engine.search(relevance).warnings)
    quoted = SearchRequest(f'"{APART}"', mode="keyword", sort="newest")
    assert docids(engine, every_id(engine, quoted)) == matches(lex, '"large scale"')


def test_stop_words_inside_a_hyphenated_word_keep_their_place(engine: SearchEngine) -> None:
    """ "state-of-the-art" is the phrase "state of the art": its stop words are not indexed,
    but the words around them must stand as far apart as in the query."""
    lex = engine.data.lexical
    together = matches(lex, '"state of the art"')
    assert together and together < matches(lex, '"state" "art"')
    request = SearchRequest("state-of-the-art", mode="keyword", sort="oldest")
    assert docids(engine, every_id(engine, request)) == together
    kq = keyword_query(lex, parse_user_query("state-of-the-art"), MatchRule(), categories={},
                       author=str)  # fmt: skip
    rarer = rarer_words(lex, kq, MatchRule(), 0.2)
    assert rarer is not None and rarer.reason == "hold 'state' and 'art' but not 'state-of-the-art'"


def test_the_note_names_both_reasons(engine: SearchEngine) -> None:
    lex = engine.data.lexical
    text = f"{QUERY} {HYPHENATED} real-world"
    kq = keyword_query(lex, parse_user_query(text), MatchRule(), categories={}, author=str)
    rarer = rarer_words(lex, kq, MatchRule(), 0.2)
    assert rarer is not None and rarer.reason == (
        "match fewer of the query's rarer words, counting common ones ('language', 'model', "
        "'paper') instead, or hold parts of 'fine-tuning' or 'real-world' but not the whole word"
    )
