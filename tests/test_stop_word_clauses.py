"""Queries of only stop words, and clauses of them, whatever the operators and the case.

A clause to require or exclude that holds only stop words analyses to nothing and is left out
(``ParsedQuery.ignored``), as Lucene's parser leaves it out: "TO BE OR NOT TO BE" answers as
"to be or not to be" does (uppercase OR and NOT are operators), "a NOT the" and "NOT the" are
queries of common words, and "transformers NOT the" is "transformers". Real index and model
(the session's ~320 demo papers), in every mode and sorted by relevance and by date.
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.results import SearchRequest, SearchResult, Sort
from papersift.engine.search import SearchEngine
from tests.search_checks import engine_with
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

MODES = ("keyword", "hybrid", "semantic")
SORTS: tuple[Sort, ...] = ("relevance", "newest")
COMMON = "the query has only common words (such as 'the'); nothing matches them"
EXCLUDED_THE = "the excluded 'the' has only common words (such as 'the'); it was ignored"
REQUIRED_THE = "the required 'the' has only common words (such as 'the'); it was ignored"
# Queries of common words alone, with operators: "TO BE OR NOT TO BE" matched 6,186 of the
# 6,189 demo papers, "a NOT the" all of them.
COMMON_ONLY = ["TO BE OR NOT TO BE", "a NOT the", "NOT the", "+the", "a AND the"]


def search(engine: SearchEngine, query: str, mode: str, sort: Sort = "relevance") -> SearchResult:
    request = SearchRequest(query, mode=mode, sort=sort, page_size=100)  # type: ignore[arg-type]
    return engine.search(request)


def ids(result: SearchResult) -> list[str]:
    return [h.paper.arxiv_id for h in result.hits]


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", COMMON_ONLY)
def test_a_query_of_common_words_matches_nothing_whatever_its_operators(
    engine: SearchEngine, query: str, mode: str, sort: Sort
) -> None:
    """As "to be or not to be" answers: nothing, with the one note and in the mode asked."""
    lower = search(engine, "to be or not to be", mode, sort)
    got = search(engine, query, mode, sort)
    assert lower.total == 0 and lower.warnings == (COMMON,)
    assert got.total == 0 and not got.hits
    assert got.warnings == lower.warnings and got.mode == lower.mode == mode


@pytest.mark.parametrize("mode", MODES)
def test_the_lowercase_and_uppercase_forms_agree(engine: SearchEngine, mode: str) -> None:
    """Of common words alone in every mode; with a real word by keywords (the model reads
    "PARSING" otherwise than "parsing", and "not the" besides)."""
    queries = ["to be or not to be", "a not the", "not the", "the and a"]
    queries += ["parsing not the", "parsing and the"] if mode == "keyword" else []
    for query in queries:
        for sort in SORTS:
            lower = search(engine, query, mode, sort)
            upper = search(engine, query.upper(), mode, sort)
            assert (upper.total, upper.mode) == (lower.total, lower.mode), (query, sort)
            assert ids(upper) == ids(lower), (query, sort)
            if lower.total == 0:
                assert upper.warnings == lower.warnings == (COMMON,), (query, sort)


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("query", "plain", "note"),
    [
        ("transformers NOT the", "transformers", EXCLUDED_THE),
        ("-the transformers", "transformers", EXCLUDED_THE),
        ("parsing NOT the", "parsing", EXCLUDED_THE),
        ("-the parsing", "parsing", EXCLUDED_THE),
        ("parsing AND the", "parsing", REQUIRED_THE),
        ("+the parsing", "parsing", REQUIRED_THE),
    ],
)
def test_an_ignored_clause_leaves_the_rest_of_the_query_as_it_is(
    engine: SearchEngine, query: str, plain: str, note: str, mode: str, sort: Sort
) -> None:
    """The same papers in the same order as the query without the clause, and a note. A
    required "the" matched nothing before, so "parsing AND the" found no paper."""
    base = search(engine, plain, mode, sort)
    got = search(engine, query, mode, sort)
    assert plain != "parsing" or base.total > 0
    assert (got.total, got.mode, ids(got)) == (base.total, base.mode, ids(base))
    assert got.warnings == (note, *base.warnings)


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_common_words_match_nothing_by_meaning_either(built_config: Config, mode: str) -> None:
    """With a semantic rule that admits every candidate, the model would list papers for
    "to be or not to be": the note says nothing matches, so none does, in every mode."""
    loose = {"semantic_gate": 0.0, "semantic_floor": 0.0, "semantic_band": 0.0,
             "semantic_zscore": 0.0}  # fmt: skip
    with engine_with(built_config, **loose) as engine:
        assert search(engine, "parsing", mode).total > 0  # the rule admits papers
        for query in ("to be or not to be", "TO BE OR NOT TO BE", "a NOT the"):
            got = search(engine, query, mode)
            assert got.total == 0 and got.warnings == (COMMON,), query


@pytest.mark.parametrize(("a", "b"), [("graph", "neural"), ("language", "speech")])
def test_not_on_real_words_is_unchanged(engine: SearchEngine, a: str, b: str) -> None:
    """a NOT b, -b a and a -b: a's papers less those holding both, none holding b
    (counted by searches of the words alone)."""
    both = search(engine, f"+{a} +{b}", "keyword").total
    assert a != "language" or both > 0  # the pair whose papers overlap
    with_b = set(ids(search(engine, b, "keyword")))
    for query in (f"{a} NOT {b}", f"-{b} {a}", f"{a} -{b}"):
        got = search(engine, query, "keyword")
        assert got.total == search(engine, a, "keyword").total - both and not got.warnings
        assert got.hits and not set(ids(got)) & with_b, query


@pytest.mark.parametrize(("a", "b"), [("graph", "network"), ("parsing", "grammar")])
def test_or_and_and_on_real_words_are_unchanged(engine: SearchEngine, a: str, b: str) -> None:
    def total(query: str) -> int:
        return search(engine, query, "keyword").total

    both = total(f"+{a} +{b}")
    assert both > 0
    assert total(f"{a} OR {b}") == total(a) + total(b) - both
    assert total(f"{a} AND {b}") == both
    assert search(engine, f"{a} OR -{b}", "keyword").warnings == (
        "'OR' next to a +/- clause was ignored",
    )


@pytest.mark.parametrize("mode", MODES)
def test_only_exclusions_browse_without_those_papers(engine: SearchEngine, mode: str) -> None:
    """Only exclusions ("NOT graph", "-graph"): every paper but graph's, newest first as
    browsing lists them (nothing to rank by), by keywords (the model has nothing to read)."""
    browse = engine.search(SearchRequest("", mode="keyword", page_size=100))
    graph = set(ids(engine.search(SearchRequest("graph", mode="keyword", page_size=100))))
    for query in ("NOT graph", "-graph"):
        got = search(engine, query, mode)
        assert got.total == browse.total - len(graph) and got.mode == "keyword"
        rest = [i for i in ids(browse) if i not in graph]
        assert len(rest) > 50 and ids(got)[: len(rest)] == rest
        assert got.warnings == (
            () if mode == "keyword" else (f"{mode} search needs free text; searched by keywords",)
        )


def test_the_page_of_exclusions_alone_marks_newest_as_its_order(client: TestClient) -> None:
    """Listed newest first, so the page's sort switch says so, and its links keep it."""
    doc = parse_html(client.get("/search", params={"q": "-parsing", "mode": "keyword"}).text)
    current = doc.xpath('//nav[@aria-label="Sort order"]//a[@aria-current]')
    assert [a.text_content() for a in current] == ["Newest"]
    words = parse_html(client.get("/search", params={"q": "parsing", "mode": "keyword"}).text)
    current = words.xpath('//nav[@aria-label="Sort order"]//a[@aria-current]')
    assert [a.text_content() for a in current] == ["Relevance"]
