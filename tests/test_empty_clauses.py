"""A query that matches nothing because one of its required clauses (``au:``, ``ti:``,
``abs:``, ``+word``) matches no paper by itself says which one; a clause that does match,
an OR alternative, and an answer with results get no such note. Real engine, demo papers."""

from __future__ import annotations

import pytest

from papersift.engine.results import Mode, SearchRequest
from papersift.engine.search import SearchEngine


def warnings_of(
    engine: SearchEngine, query: str, mode: Mode = "keyword"
) -> tuple[int, tuple[str, ...]]:
    result = engine.search(SearchRequest(query=query, mode=mode, autocorrect=False))
    return result.total, result.warnings


def a_real_author(engine: SearchEngine) -> str:
    """The surname of the first author of the newest paper, searched as ``au:``."""
    found = engine.search(SearchRequest(query="", mode="keyword"))
    return found.hits[0].paper.authors[0].name.split()[-1]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("au:qzxwvnobody", "no author in this index is named 'qzxwvnobody'"),
        ("ti:qzxwvtitle language", "no paper's title holds 'qzxwvtitle'"),
        ("abs:qzxwvabstract", "no paper's abstract holds 'qzxwvabstract'"),
        ("+qzxwvrequired models", "no paper holds 'qzxwvrequired', which the query requires"),
        ('ti:"language qzxwv models"', "no paper's title holds “language qzxwv models”"),
    ],
)
def test_a_required_clause_matching_nothing_is_named(
    engine: SearchEngine, mode: Mode, query: str, note: str
) -> None:
    total, warnings = warnings_of(engine, query, mode)
    assert total == 0
    assert note in warnings


def test_clauses_that_match_are_not_named(engine: SearchEngine) -> None:
    surname = a_real_author(engine)
    assert warnings_of(engine, f"au:{surname}")[0] > 0
    # Each clause matches papers, together none: no clause is to blame.
    total, warnings = warnings_of(engine, f"au:{surname} +qzxwvrequired")
    assert total == 0
    assert not any("is named" in w for w in warnings)
    assert "no paper holds 'qzxwvrequired', which the query requires" in warnings
    # An alternative that matches nothing is no reason to say so; nor are results.
    total, warnings = warnings_of(engine, f"au:{surname} OR au:qzxwvnobody")
    assert total > 0
    assert not any("qzxwvnobody" in w for w in warnings)
