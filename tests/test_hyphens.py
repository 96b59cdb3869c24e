"""A hyphenated query word in relevance order (``engine.hyphens``): a paper holds it when it
holds every part that is not a stop word, and the parts together where one is a number or
a letter or two ("h-index", "GPT-4"), or the word written as one; it scores as its parts.

Each part alone used to be enough: at 663k papers "SARS-CoV-2" matched 116,461 papers and
"Yang-Mills" authors named Yang. Real index (the session's ~320 demo papers); the expected
sets are Tantivy queries written by hand.
"""

from __future__ import annotations

import pytest

from papersift.engine.hyphens import tight
from papersift.engine.match import MatchRule, keyword_query
from papersift.engine.query import parse_user_query
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from tests.test_rarest_word import docids, every_id, matches


def scores(engine: SearchEngine, text: str) -> dict[int, float]:
    """Each paper's score under a query written in Tantivy's syntax."""
    lex = engine.data.lexical
    ids, values, _ = lex.search(lex.parse(text)[0], lex.num_docs)
    return dict(zip(ids, values, strict=True))


def test_which_parts_hold_a_word_only_together() -> None:
    assert tight(["h", "index"]) and tight(["GPT", "4"]) and tight(["SARS", "CoV", "2"])
    assert not tight(["fine", "tuning"]) and not tight(["Yang", "Mills"])
    assert not tight(["state", "of", "the", "art"])  # stop words are not parts that count


def test_a_hyphenated_word_needs_every_part(engine: SearchEngine) -> None:
    """ "large-scale": papers holding "large" and "scale" (anywhere) or "largescale", not
    those holding one of them; each scores as under the parts' own query, and the papers
    holding the parts together score their phrase once more, so they come first."""
    lex = engine.data.lexical
    either = matches(lex, '"large" "scale"')
    both = matches(lex, '+"large" +"scale"')
    together = matches(lex, '"large scale"')
    expected = both | matches(lex, '"largescale"')
    assert len(together) > 3 and together < both < either
    request = SearchRequest("large-scale", mode="keyword")
    result = engine.search(request)
    assert result.total == len(expected)
    assert docids(engine, every_id(engine, request)) == expected
    parts, phrase = scores(engine, '"large" "scale"'), scores(engine, '"large scale"')
    first = engine.search(SearchRequest("large-scale", mode="keyword", page_size=100))
    for hit in first.hits:
        docid = engine.data.store.docid_of(hit.paper.arxiv_id)
        assert docid is not None
        want = parts.get(docid, 0.0) + phrase.get(docid, 0.0)
        assert abs(hit.score - want) < 1e-4 * max(1.0, want)
    ranked = docids(engine, [h.paper.arxiv_id for h in first.hits[: len(together)]])
    assert len(ranked & together) > len(together) // 2
    # The category facet counts the same papers.
    cats = {c.value: c.count for c in result.facets["categories"]}
    top = max(cats, key=cats.__getitem__)
    narrowed = engine.search(SearchRequest("large-scale", mode="keyword",
                                           filters=Filters(categories=(top,))))  # fmt: skip
    assert narrowed.total == cats[top] <= len(expected)


def test_a_number_or_short_part_holds_the_word_only_beside_the_others(
    engine: SearchEngine,
) -> None:
    """ "h-index": a lone "h" says nothing, so only the phrase ("h index", "h-index") or
    "hindex" holds it."""
    lex = engine.data.lexical
    expected = matches(lex, '"h index" "hindex"')
    assert expected and expected < matches(lex, '"h" "index"')
    request = SearchRequest("h-index", mode="keyword")
    assert docids(engine, every_id(engine, request)) == expected
    # One word of several: it counts toward the query's words as the phrase.
    two = SearchRequest("h-index citations", mode="keyword")
    assert docids(engine, every_id(engine, two)) == matches(
        lex, '+("h index" "hindex") +"citations"'
    )


def test_stop_word_parts_are_not_required(engine: SearchEngine) -> None:
    """ "state-of-the-art" needs "state" and "art": its stop words are not indexed in
    titles and abstracts, and required they would have to be authors' names."""
    lex = engine.data.lexical
    expected = matches(lex, '(+"state" +"art") "stateoftheart"')
    assert len(expected) > 3
    request = SearchRequest("state-of-the-art", mode="keyword")
    assert docids(engine, every_id(engine, request)) == expected


@pytest.mark.parametrize("text", ["fine-tuning language models", "h-index OR citations"])
def test_hybrid_candidates_count_each_part_as_before(engine: SearchEngine, text: str) -> None:
    """Hybrid's keyword candidates (fusion was tuned on them) still take any part."""
    lex = engine.data.lexical
    parsed = parse_user_query(text)
    built = keyword_query(lex, parsed, MatchRule(), categories={}, author=str)
    assert built.ranking is not None and built.query is not None
    words = " ".join(c.tantivy_string() for c in parsed.clauses)
    assert set(lex.search(built.ranking, lex.num_docs)[0]) == matches(lex, words)
    assert set(lex.search(built.query, lex.num_docs)[0]) < matches(lex, words)


def test_where_a_query_needs_only_some_words_either_part_counts(engine: SearchEngine) -> None:
    """Five free words need three, any three: a hyphenated one counts toward them with
    either part, as before (held whole there, it cost SciFact's sentence-like claims
    keyword nDCG@10: bench/RESULTS.md, session 35). Sorted by date it is held together
    (``engine.rarer_words``)."""
    lex = engine.data.lexical
    words = ["language", "model", "evaluation", "text"]
    fine = '("fine" "tuning")'
    groups = [[a, b] for i, a in enumerate(words) for b in words[i + 1 :]]
    two_more = " ".join("(" + " ".join(f'+"{w}"' for w in g) + ")" for g in groups)
    three = " ".join("(" + " ".join(f'+"{w}"' for w in t) + ")" for t in _triples(words))
    expected = matches(lex, f"(+{fine} +({two_more})) {three}")
    request = SearchRequest("fine-tuning " + " ".join(words), mode="keyword")
    assert docids(engine, every_id(engine, request)) == expected
    # Papers counting "fine" or "tuning" alone toward the three.
    assert expected - matches(lex, three) - matches(lex, '+"fine" +"tuning"')


def _triples(words: list[str]) -> list[list[str]]:
    return [[w for w in words if w != skip] for skip in words]
