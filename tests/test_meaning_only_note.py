"""A hybrid list sorted by date says when most of it matches by meaning only: sorted so,
the papers that do not match the query's words are mixed in with those that do (in a corpus
on one field they can be hundreds; bench/RESULTS.md, session 27)."""

from __future__ import annotations

import pytest

from papersift.engine.plan import meaning_only_note
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine

NOTE = "by meaning only"


def _notes(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if NOTE in w]


def test_date_sorted_hybrid_names_its_shares(engine: SearchEngine) -> None:
    query = "machine translation evaluation"
    words = engine.search(SearchRequest(query, mode="keyword")).total
    relevance = engine.search(SearchRequest(query, mode="hybrid"))
    newest = engine.search(SearchRequest(query, mode="hybrid", sort="newest"))
    assert 0 < 2 * words < newest.total == relevance.total  # mostly by meaning: the case
    assert not _notes(relevance.warnings)  # relevance order puts them after the words
    assert _notes(newest.warnings) == [
        f"sorted by date, newest first: {newest.total - words:,} of these {newest.total:,} "
        f"papers match by meaning only, mixed in with the {words:,} that match the query's "
        "words (keyword search lists those alone)"
    ]
    oldest = engine.search(SearchRequest(query, mode="hybrid", sort="oldest"))
    assert _notes(oldest.warnings)[0].startswith("sorted by date, oldest first: ")
    for mode in ("keyword", "semantic"):  # one kind of match: nothing to tell apart
        assert not _notes(engine.search(SearchRequest(query, mode=mode, sort="newest")).warnings)


def test_no_note_when_the_words_are_most_of_it(engine: SearchEngine) -> None:
    # A word in most abstracts here: the semantic side adds few papers of its own.
    query = "language"
    words = engine.search(SearchRequest(query, mode="keyword")).total
    newest = engine.search(SearchRequest(query, mode="hybrid", sort="newest"))
    assert 2 * words >= newest.total > 0
    assert not _notes(newest.warnings)


@pytest.mark.parametrize(
    ("total", "by_words", "shown"),
    [(10, 4, True), (10, 5, False), (10, 0, True), (0, 0, False), (10, None, False)],
)
def test_the_rule(total: int, by_words: int | None, shown: bool) -> None:
    assert bool(meaning_only_note("newest", total, by_words)) is shown
    assert not meaning_only_note("relevance", total, by_words)
    if by_words == 0 and shown:
        assert (
            "none of these 10 papers matches the query's words"
            in (meaning_only_note("cited", total, by_words)[0])
        )
