"""Exact title matches first (engine.title_match) on the small real index, every mode."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from papersift.core.config import Config
from papersift.engine.query import parse_user_query
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.title_match import put_first, title_phrase
from tests.search_checks import engine_with


@pytest.fixture(scope="module")
def unpromoted(built_config: Config) -> Iterator[SearchEngine]:
    """The same index with the rule off (``title_phrase_max = 0``)."""
    with engine_with(built_config, title_phrase_max=0) as eng:
        yield eng


def cut(title: str, words: int = 4) -> str:
    """The middle ``words`` words of a title, as someone remembers it."""
    w = re.findall(r"[\w-]+", title)
    start = max(0, (len(w) - words) // 2)
    return " ".join(w[start : start + words])


def titles(engine: SearchEngine) -> list[tuple[str, str]]:
    """(arXiv id, title) of every paper whose title has five words or more."""
    papers = engine.data.store.get(list(range(1, engine.data.store.count() + 1)))
    return [(p.arxiv_id, p.title) for p in papers.values() if len(p.title.split()) >= 5]


def test_title_phrase_needs_three_words_of_free_text() -> None:
    assert title_phrase(parse_user_query("dark matter")) is None
    assert title_phrase(parse_user_query("dark matter halo")) == "dark matter halo"
    assert title_phrase(parse_user_query("x-ray binary")) == "x-ray binary"  # three words
    assert title_phrase(parse_user_query("the of quantum")) is None  # one indexed word
    # Exclusions and fields are not title text.
    assert title_phrase(parse_user_query("dark matter -halo ti:galaxy")) is None
    assert title_phrase(parse_user_query('+"dark matter" halo')) == "dark matter halo"


def test_put_first_keeps_scores_and_appends_the_missing() -> None:
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    assert put_first(ranked, [4, 2]) == [(2, 0.8), (4, 0.6), (1, 0.9), (3, 0.7)]
    assert put_first(ranked, [9]) == [(9, 0.0), *ranked]
    assert put_first(ranked, []) is ranked


def test_a_remembered_part_of_a_title_finds_the_paper_in_hybrid(
    engine: SearchEngine, unpromoted: SearchEngine
) -> None:
    """Without the rule, semantic weight pushes some papers off the top for a phrase cut
    from their own title; with it, every such paper is first, marked by its title rank."""
    moved = 0
    checked = 0
    for arxiv_id, title in titles(engine)[:60]:
        request = SearchRequest(cut(title), mode="hybrid", page_size=10)
        result = engine.search(request)
        if "title" not in result.hits[0].ranks:
            continue  # the phrase is in more titles than the limit: a topic
        checked += 1
        first = [h for h in result.hits if "title" in h.ranks]
        assert arxiv_id in {h.paper.arxiv_id for h in first}, title
        assert [h.ranks["title"] for h in first] == list(range(1, len(first) + 1))
        before = [h.paper.arxiv_id for h in unpromoted.search(request).hits]
        moved += before[:1] != [result.hits[0].paper.arxiv_id]
    assert checked >= 40
    assert moved >= 1  # the rule changes real rankings here, not only in theory


def test_full_titles_come_first_in_keyword_and_hybrid(engine: SearchEngine) -> None:
    for arxiv_id, title in titles(engine)[:40]:
        for mode in ("keyword", "hybrid"):
            hits = engine.search(SearchRequest(title, mode=mode, page_size=3)).hits
            assert hits[0].paper.arxiv_id == arxiv_id, (mode, title)


def shared_phrase(engine: SearchEngine) -> tuple[str, set[str]]:
    """Three consecutive title words (two not stop words) that 2 to 10 titles hold, and
    those papers' ids."""
    for _, title in titles(engine):
        words = re.findall(r"[A-Za-z]+", title)
        for i in range(len(words) - 2):
            phrase = " ".join(words[i : i + 3])
            if title_phrase(parse_user_query(phrase)) is None:
                continue  # mostly stop words: the rule does not apply
            found = engine.search(SearchRequest(f'ti:"{phrase}"', mode="keyword")).hits
            if 2 <= len(found) <= 10:
                return phrase, {h.paper.arxiv_id for h in found}
    raise AssertionError("no title phrase shared by 2 to 10 papers")


def test_every_title_match_comes_first_unless_there_are_too_many(
    engine: SearchEngine, built_config: Config
) -> None:
    phrase, holders = shared_phrase(engine)
    for mode in ("keyword", "hybrid"):
        hits = engine.search(SearchRequest(phrase, mode=mode)).hits
        first = {h.paper.arxiv_id for h in hits[: len(holders)]}
        assert first == holders, (mode, phrase)
        assert all(("title" in h.ranks) == (h.paper.arxiv_id in holders) for h in hits)
    # More holders than the limit: a topic, nothing is put first.
    with engine_with(built_config, title_phrase_max=len(holders) - 1) as strict:
        for mode in ("keyword", "hybrid"):
            hits = strict.search(SearchRequest(phrase, mode=mode)).hits
            assert hits and all("title" not in h.ranks for h in hits), mode


def test_filters_exclusions_and_sorts_are_kept(engine: SearchEngine) -> None:
    arxiv_id, title = titles(engine)[1]
    paper = engine.paper(arxiv_id)
    assert paper is not None
    other = "cs.CL" if "cs.CL" not in paper.categories else "hep-th"
    filtered = engine.search(
        SearchRequest(title, mode="hybrid", filters=Filters(categories=(other,)))
    )
    assert arxiv_id not in {h.paper.arxiv_id for h in filtered.hits}
    word = max(re.findall(r"[A-Za-z]{5,}", paper.abstract), key=len)
    excluded = engine.search(SearchRequest(f"{title} -{word}", mode="hybrid"))
    assert arxiv_id not in {h.paper.arxiv_id for h in excluded.hits}
    newest = engine.search(SearchRequest(title, mode="hybrid", sort="newest", page_size=100))
    assert all("title" not in h.ranks for h in newest.hits)
    dates = [h.paper.published for h in newest.hits]
    assert dates == sorted(dates, reverse=True)


@pytest.mark.parametrize(
    "query",
    [
        "α β γ δ",
        "!!! ??? ... ,,,",
        "a an the of",
        "e.g. i.e. etc. vs.",
        '"unclosed phrase of a title',
        "ti: abs: au: cat:",
        " ".join(["language model parsing translation"] * 25),
        'C++ templates \\ and " quotes',
    ],
)
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_odd_queries_are_answered(engine: SearchEngine, query: str, mode: str) -> None:
    result = engine.search(SearchRequest(query, mode=mode))  # type: ignore[arg-type]
    assert result.total >= 0
    assert all("title" not in h.ranks or h.ranks["title"] <= 10 for h in result.hits)
