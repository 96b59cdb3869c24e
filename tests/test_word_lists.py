"""Real words are no typos (``engine.word_lists``): a word of English running text, an
acronym in capitals or a query in another language gets no "did you mean" and no
autocorrection, only a note that the index does not hold it; typos still get both. Real
word lists (pyspellchecker's) and the real index of the session's demo papers."""

from __future__ import annotations

import pytest

from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.spelling import suggest
from papersift.engine.word_lists import foreign_language, is_english, words_of


def test_the_lists_know_real_words_and_not_typos() -> None:
    assert all(is_english(w) for w in ("halo", "quasar", "Boson", "effect", "network"))
    typos = ("machien", "lerning", "langauge", "netwrok", "grammer", "modle", "teh", "recieve")
    assert not any(is_english(w) for w in typos)
    # At the list's floor: a dictionary word never seen in running text, most often a typo
    # of "semantic" in a paper search.
    assert not is_english("sematic")
    assert len(words_of("en")) > 40_000 and all(len(words_of(x)) > 10_000 for x in ("fr", "de"))


def test_a_query_in_another_language_is_not_misspelt_english() -> None:
    assert foreign_language(["traduction", "neuronale"]) == "fr"
    assert foreign_language(["Größe", "lernen"]) == "de"  # accents folded
    assert foreign_language(["compter"]) is None  # one word: more likely a typo
    assert foreign_language(["quantum", "compter"]) is None  # English holds one
    assert foreign_language(["machien", "lerning"]) is None


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("halo effect", "halo"),
        ("quasar survey", "quasar"),
        ("CRISPR gene editing", "CRISPR"),
        ("CRISPR", "CRISPR"),  # the acronym alone was corrected to "CRISP" (review, session 37)
    ],
)
def test_a_real_word_no_paper_holds_is_not_corrected(
    engine: SearchEngine, query: str, word: str
) -> None:
    lex, store = engine.data.lexical, engine.data.store
    assert not lex.postings([word.lower()])
    assert suggest(lex, store, word) is not None  # a near word exists: it would be changed
    for mode in ("keyword", "hybrid"):
        result = engine.search(SearchRequest(query, mode=mode))  # type: ignore[arg-type]
        assert result.suggestion is None and result.corrected is None, (query, mode)
        assert f"no paper in this index holds '{word}'" in result.warnings
        assert not any("check the spelling" in w for w in result.warnings)


@pytest.mark.parametrize("query", ["机器翻译", "машинный перевод"])
def test_a_word_in_another_script_is_not_misspelt(engine: SearchEngine, query: str) -> None:
    """No paper holds it, and no Latin word is its correction: "check the spelling" was
    wrong advice (review, session 37)."""
    result = engine.search(SearchRequest(query, mode="keyword"))
    assert result.total == 0 and result.suggestion is None
    words = ", ".join(f"'{w}'" for w in query.split())
    assert f"no paper in this index holds {words}" in result.warnings
    assert not any("check the spelling" in w for w in result.warnings)


def test_typos_beside_real_words_are_still_corrected(engine: SearchEngine) -> None:
    result = engine.search(SearchRequest("halo langauge", mode="keyword", autocorrect=False))
    assert result.suggestion == "halo language"
    assert result.warnings[:2] == (
        "no paper holds 'langauge': check the spelling",
        "no paper in this index holds 'halo'",
    )
    # A query all in capitals is shouted, not a row of acronyms.
    shouted = engine.search(SearchRequest("LANGAUGE TRANSLATON", mode="keyword"))
    assert shouted.corrected == "LANGUAGE TRANSLATION" and shouted.total > 0


def test_a_french_query_gets_no_english_correction(engine: SearchEngine) -> None:
    query = "traduction neuronale"
    lex = engine.data.lexical
    assert not lex.postings(["traduction"]) and not lex.postings(["neuronale"])
    result = engine.search(SearchRequest(query, mode="keyword"))
    assert result.suggestion is None and result.total == 0
    assert "no paper in this index holds 'traduction', 'neuronale'" in result.warnings
