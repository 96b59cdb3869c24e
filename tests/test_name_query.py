"""A query that reads as a name is searched by keywords (``engine.plan.reads_as_name``).

The model does not know people: the papers nearest in meaning to "Lariviere" are noise,
which hybrid search listed after his own papers. Real index (the session's demo sample).
"""

from __future__ import annotations

from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine

NAME_NOTE = "the query reads as a name"


def _surname(engine: SearchEngine) -> str:
    """A surname of the sample that authors hold and no title or abstract does."""
    lex = engine.data.lexical
    found, _ = engine.people.search("", limit=300)
    for person in sorted(found, key=lambda r: -r.papers):
        surname = person.name.split()[-1]
        held = lex.doc_freqs(surname)
        if surname.isalpha() and held["au"] >= 2 and held["ti"] + held["abs"] == 0:
            return surname
    raise AssertionError("no such surname in the sample")


def test_a_surname_is_searched_by_keywords(engine: SearchEngine) -> None:
    surname = _surname(engine)
    result = engine.search(SearchRequest(surname))
    keyword = engine.search(SearchRequest(surname, mode="keyword"))
    assert result.mode == "keyword" and any(NAME_NOTE in w for w in result.warnings)
    assert result.total == keyword.total >= 2
    assert [h.paper.arxiv_id for h in result.hits] == [h.paper.arxiv_id for h in keyword.hits]
    names = [" ".join(a.name for a in h.paper.authors).lower() for h in result.hits]
    assert all(surname.lower() in n for n in names)


def test_topic_words_and_asked_semantic_keep_their_mode(engine: SearchEngine) -> None:
    surname = _surname(engine)
    assert engine.search(SearchRequest(surname, mode="semantic")).mode == "semantic"
    for text in ("translation", f"{surname} translation"):
        result = engine.search(SearchRequest(text))
        assert result.mode == "hybrid" and not any(NAME_NOTE in w for w in result.warnings)
