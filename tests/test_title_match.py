"""Exact title matches first (engine.title_match) on the small real index, every mode."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

import pytest

from papersift.core.config import Config
from papersift.engine import title_match
from papersift.engine.datadir import DataDir
from papersift.engine.query import parse_user_query
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.title_match import put_first, same_words, title_phrase
from papersift.indexer.build import import_files, index_backlog
from tests.corpus import demo_records, make_config, sample_records, write_jsonl
from tests.search_checks import engine_with

# Real demo papers (whole title, a longer title holding it) that BM25 and hybrid fusion
# ranked the longer one first for the shorter one's title, before whole titles came first.
NESTED = (
    ("1306.3293", "1405.1574"),  # "Quantifying Long-Term Scientific Impact", "Comment on ..."
    ("1411.1996", "1501.07857"),  # "... departmental h-index", "... revisited"
    ("2505.10740", "2508.03475"),  # "SemEval-2025 Task 7: ...", "fact-check-AI at ..."
    ("cmp-lg/9604008", "cmp-lg/9605031"),  # "... the DOP Model", "...: A Reply to ..."
    ("1408.3863", "1508.06206"),  # "Semantic Publishing Challenge -- ...", "... by ..."
)


@pytest.fixture(scope="module")
def unpromoted(built_config: Config) -> Iterator[SearchEngine]:
    """The same index with the rule off (``title_phrase_max = 0``)."""
    with engine_with(built_config, title_phrase_max=0) as eng:
        yield eng


@pytest.fixture(scope="module")
def nested(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """~30 demo papers and the pairs of ``NESTED``, imported and embedded."""
    root = tmp_path_factory.mktemp("nested")
    config = make_config(root)
    wanted = {i for pair in NESTED for i in pair}
    records = sample_records(every=200)
    records += [r for r in demo_records() if r["id"] in wanted - {r["id"] for r in records}]
    data = DataDir(config)
    import_files(data, [write_jsonl(root / "papers.jsonl", records)])
    index_backlog(data)
    data.close()
    return config


def cut(title: str, words: int = 4) -> str:
    """The middle ``words`` words of a title, as someone remembers it."""
    w = re.findall(r"[\w-]+", title)
    start = max(0, (len(w) - words) // 2)
    return " ".join(w[start : start + words])


def titles(engine: SearchEngine) -> list[tuple[str, str]]:
    """(arXiv id, title) of every paper whose title has five words or more."""
    papers = engine.data.store.get(list(range(1, engine.data.store.count() + 1)))
    return [(p.arxiv_id, p.title) for p in papers.values() if len(p.title.split()) >= 5]


def test_title_phrase_needs_two_indexed_words_of_free_text() -> None:
    assert title_phrase(parse_user_query("dark matter")) == "dark matter"
    assert title_phrase(parse_user_query("matter")) is None
    assert title_phrase(parse_user_query("dark matter halo")) == "dark matter halo"
    assert title_phrase(parse_user_query("x-ray binary")) == "x-ray binary"  # three words
    assert title_phrase(parse_user_query("the of quantum")) is None  # one indexed word
    assert title_phrase(parse_user_query("the matter")) is None
    # Exclusions and fields are not title text.
    assert title_phrase(parse_user_query("dark -halo ti:galaxy")) is None
    assert title_phrase(parse_user_query('+"dark matter" halo')) == "dark matter halo"


def test_put_first_keeps_scores_and_appends_the_missing() -> None:
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    assert put_first(ranked, [4, 2]) == [(2, 0.8), (4, 0.6), (1, 0.9), (3, 0.7)]
    # Whole titles first, then the other holders, each in list order.
    assert put_first(ranked, [4, 2, 9], [4]) == [(4, 0.6), (2, 0.8), (9, 0.0), (1, 0.9), (3, 0.7)]
    assert put_first(ranked, [4, 2, 9], [9, 4]) == [
        (4, 0.6),
        (9, 0.0),
        (2, 0.8),
        (1, 0.9),
        (3, 0.7),
    ]
    assert put_first(ranked, [9]) == [(9, 0.0), *ranked]
    assert put_first(ranked, []) is ranked


@pytest.mark.parametrize("words", [4, 2])
def test_a_remembered_part_of_a_title_finds_the_paper_in_hybrid(
    engine: SearchEngine, unpromoted: SearchEngine, words: int
) -> None:
    """Without the rule, semantic weight pushes some papers off the top for a phrase cut
    from their own title; with it, every such paper is first, marked by its title rank.
    Two words too: "Costly Collaborations" was the 10th hit for its own paper's title."""
    moved = 0
    checked = 0
    for arxiv_id, title in titles(engine)[:60]:
        request = SearchRequest(cut(title, words), mode="hybrid", page_size=10)
        if title_phrase(parse_user_query(request.query)) is None:
            continue  # a stop word among two: no title phrase
        result = engine.search(request)
        if "title" not in result.hits[0].ranks:
            continue  # the phrase is in more titles than the limit: a topic
        checked += 1
        first = [h for h in result.hits if "title" in h.ranks]
        assert arxiv_id in {h.paper.arxiv_id for h in first}, title
        assert [h.ranks["title"] for h in first] == list(range(1, len(first) + 1))
        before = [h.paper.arxiv_id for h in unpromoted.search(request).hits]
        moved += before[:1] != [result.hits[0].paper.arxiv_id]
    assert checked >= 40 if words == 4 else checked >= 20, checked
    assert moved >= 1  # the rule changes real rankings here, not only in theory


def test_full_titles_come_first_in_keyword_and_hybrid(engine: SearchEngine) -> None:
    for arxiv_id, title in titles(engine)[:40]:
        for mode in ("keyword", "hybrid"):
            hits = engine.search(SearchRequest(title, mode=mode, page_size=3)).hits
            assert hits[0].paper.arxiv_id == arxiv_id, (mode, title)


def test_a_whole_title_comes_before_longer_titles_holding_it(nested: Config) -> None:
    """As typed, quoted, or lowercased with a trailing period, in keyword and hybrid."""
    with engine_with(nested) as engine:
        for whole, longer in NESTED:
            paper = engine.paper(whole)
            assert paper is not None
            title = " ".join(paper.title.split())
            for query in (title, f'"{title}"', title.lower() + "."):
                for mode in ("keyword", "hybrid"):
                    hits = engine.search(SearchRequest(query, mode=mode, page_size=5)).hits
                    ids = [h.paper.arxiv_id for h in hits]
                    assert ids[:2] == [whole, longer], (mode, query, ids)
                    assert [h.ranks.get("title") for h in hits[:2]] == [1, 2]


def test_a_whole_title_comes_first_when_more_titles_hold_it_than_the_limit(
    nested: Config,
) -> None:
    """Over ``title_phrase_max`` holders the phrase is a topic and the others are not put
    first, but the paper whose whole title it is still is."""
    whole = NESTED[3][0]
    with engine_with(nested, title_phrase_max=1) as engine:
        paper = engine.paper(whole)
        assert paper is not None
        for mode in ("keyword", "hybrid"):
            hits = engine.search(SearchRequest(paper.title, mode=mode, page_size=5)).hits
            assert hits[0].paper.arxiv_id == whole and hits[0].ranks["title"] == 1, mode
            assert all("title" not in h.ranks for h in hits[1:]), mode
            # A part of the title is not a whole title: nothing is put first.
            part = engine.search(SearchRequest(cut(paper.title), mode=mode)).hits
            assert part and all("title" not in h.ranks for h in part), mode


def test_same_words_ignores_case_punctuation_tex_and_accents_only() -> None:
    assert same_words(
        r"On separable Schr\"odinger equations.", "on separable schrodinger equations"
    )
    assert same_words("Semantic-based Transfer", "semantic based transfer")
    assert same_words("Attention Is All You Need", "Attention is all you need.")
    assert same_words("$N=2$ Supersymmetric Models", "N 2 supersymmetric models")
    assert not same_words("Graph Attention Network", "Graph Attention Networks")  # no stems
    assert not same_words("On the number of harmonic frames", "number of harmonic frames")
    assert not same_words("Tool Attention Is All You Need", "Attention Is All You Need")


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


def test_a_two_word_topic_is_not_looked_for(
    engine: SearchEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both words of a two-word query in more than ``TWO_WORD_TITLES`` titles: a topic,
    whose title phrase search (0.9 ms for "language models" at 663k papers) is skipped. The
    session's index has no word that common, so the bound is lowered below the titles of
    the words of a two words cut from a title that the rule puts first."""
    lex = engine.data.lexical
    for _, title in titles(engine):
        request = SearchRequest(cut(title, 2), mode="keyword", page_size=5)
        if title_phrase(parse_user_query(request.query)) is None:
            continue
        if "title" in engine.search(request).hits[0].ranks:
            break
    else:
        pytest.fail("no two words of a title that the rule puts first")
    searcher = lex.searcher()
    least = min(searcher.doc_freq("ti", t) for t in lex.analyzer("ti").analyze(request.query))
    monkeypatch.setattr(title_match, "TWO_WORD_TITLES", least - 1)
    assert title_match.common_pair(lex, request.query)
    uncached = dataclasses.replace(request, page_size=6)  # not the answer cached above
    assert not any("title" in h.ranks for h in engine.search(uncached).hits), request.query
