"""A word a match must hold, it holds in one of its own forms (``engine.word_forms``): its
inflections that Porter2 stems alike, not every word sharing its stem.

Stemmed alone, "specification" matched the papers saying "specific" or "specifically" (62 of
the sample's, against 4 holding the word), and at 663k papers "transformer" the papers on
Fourier transforms. Real index (the session's ~320 demo papers); the expected sets are
Tantivy queries written by hand.
"""

from __future__ import annotations

import json

import httpx

from papersift.core.config import Config
from papersift.engine.datadir import SCHEMA_VERSION
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine
from papersift.engine.word_forms import bases, candidates, held_forms
from tests.search_checks import engine_with
from tests.test_hyphens import scores
from tests.test_rarest_word import docids, every_id, matches

pytest_plugins = ["tests.web_fixtures"]

SPECIFICATION = '(words:"specification" words:"specifications" au:"specification")'


def test_a_word_s_forms_are_its_inflections() -> None:
    assert {"study", "studied", "studying"} <= candidates("studies")
    assert {"compute", "computes", "computed"} <= candidates("computing")
    assert {"spin", "spins"} <= bases("spinning") | candidates("spinning")
    assert "spinning" in candidates("spin") and "transformers" in candidates("transformer")
    # Derivations are not forms, and a short ending is not a base ("red" is not "r" + "ed").
    assert not {"transform", "transformation"} & candidates("transformer")
    assert "motivated" not in candidates("motivic") and bases("red") == {"red"}
    assert {"ai", "3d"} <= candidates("ai") | candidates("3d")  # a short word is its own form


def test_a_word_matches_its_forms_not_its_stem(engine: SearchEngine) -> None:
    lex = engine.data.lexical
    assert held_forms(lex, "specifications") == held_forms(lex, "Specification") != {}
    expected = matches(lex, SPECIFICATION)
    stemmed = matches(lex, '"specification"')  # "specific", "specifically", "specificity"
    assert len(expected) >= 3 and len(stemmed) > 3 * len(expected) and expected < stemmed
    for text in ("specification", "specifications"):
        request = SearchRequest(text, mode="keyword")
        result = engine.search(request)
        assert result.total == len(expected)
        assert docids(engine, every_id(engine, request)) == expected
    # Each match scores as the stem's query scores it: ranking is unchanged.
    want = scores(engine, '"specification"')
    for hit in engine.search(SearchRequest("specification", mode="keyword")).hits:
        docid = engine.data.store.docid_of(hit.paper.arxiv_id)
        assert docid is not None and abs(hit.score - want[docid]) < 1e-4 * max(1.0, want[docid])


def test_the_rule_can_be_turned_off(built_config: Config) -> None:
    """``[search] match_word_forms = false``: the stem's matches, as before the rule."""
    with engine_with(built_config, match_word_forms=False) as stems:
        lex = stems.data.lexical
        request = SearchRequest("specification", mode="keyword")
        assert docids(stems, every_id(stems, request)) == matches(lex, '"specification"')


def test_every_word_of_a_short_query_holds_a_form(engine: SearchEngine) -> None:
    lex = engine.data.lexical
    request = SearchRequest("model specification", mode="keyword")
    expected = matches(lex, f'+"model" +{SPECIFICATION}')
    assert expected and docids(engine, every_id(engine, request)) == expected
    # Sorted by date, the same papers.
    newest = SearchRequest("model specification", mode="keyword", sort="newest")
    assert docids(engine, every_id(engine, newest)) == expected


def test_a_required_word_holds_a_form(engine: SearchEngine) -> None:
    """ "+specification": required, so held in one of its forms, alone or beside other
    words."""
    lex = engine.data.lexical
    alone = SearchRequest("+specification", mode="keyword")
    assert docids(engine, every_id(engine, alone)) == matches(lex, SPECIFICATION)
    beside = SearchRequest("+specification model", mode="keyword")
    model = " ".join(f"words:{f}" for f in ("model", "models", "modeled", "modeling",
                                               "modelled", "modelling"))  # fmt: skip
    expected = matches(lex, f"+{SPECIFICATION} +({model} au:model)")
    assert expected and docids(engine, every_id(engine, beside)) == expected


def test_a_word_no_paper_holds_in_any_form_keeps_its_stem(engine: SearchEngine) -> None:
    """ "generatively" is in no paper; papers on generation and generative models hold
    its stem, and an empty list would say nothing."""
    lex = engine.data.lexical
    assert held_forms(lex, "generatively") == {}
    stemmed = matches(lex, '"generatively"')
    request = SearchRequest("generatively", mode="keyword")
    assert stemmed and docids(engine, every_id(engine, request)) == stemmed
    note = "no paper holds 'generatively' as written; its matches hold other words of the same stem"
    assert note in engine.search(request).warnings
    for held in ("specification", "AI"):  # "AI": two letters, still its own form
        assert not any("as written" in w for w in engine.search(SearchRequest(held)).warnings)
    assert held_forms(lex, "AI") == {"ai": len(matches(lex, "words:ai"))} != {"ai": 0}


def test_a_name_is_held_as_written(engine: SearchEngine) -> None:
    """An author's name that no title or abstract holds ("Melamed", which Porter2 stems to
    "melam", "Cormode" to "cormod") is held as the name: its papers, and no note that only
    its stem is (the demo said so of every such name: review of session 37)."""
    lex = engine.data.lexical
    for name in ("Melamed", "Cormode"):
        assert held_forms(lex, name) == {} and matches(lex, f'au:"{name}"'), name
        request = SearchRequest(name, mode="keyword")
        assert docids(engine, every_id(engine, request)) == matches(lex, f'au:"{name}"')
        assert not any("as written" in w for w in engine.search(request).warnings), name
        assert not any("as written" in w for w in engine.search(SearchRequest(name)).warnings)


def test_the_api_counts_what_it_lists(engine: SearchEngine, http: httpx.Client) -> None:
    answer = http.get("/api/v1/search", params={"q": "specification", "mode": "keyword"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["total"] == len(matches(engine.data.lexical, SPECIFICATION))
    cats = {c["value"]: c["count"] for c in body["facets"]["categories"]}
    top = max(cats, key=cats.__getitem__)
    narrowed = http.get(
        "/api/v1/search", params={"q": "specification", "mode": "keyword", "category": top}
    )
    assert narrowed.status_code == 200 and narrowed.json()["total"] == cats[top]


def test_a_keyword_index_of_schema_5_is_rebuilt_once_with_the_forms(small: Config) -> None:
    """Schema 5 had no unstemmed field: its keyword index is rebuilt from the store when the
    directory opens, and the manifest says 6 only once that is done."""
    manifest = small.data_dir / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "schema_version": 5}))
    with open_engine(small) as engine:
        assert engine.data.lexical_rebuilt
        assert held_forms(engine.data.lexical, "parsing")
    assert json.loads(manifest.read_text())["schema_version"] == SCHEMA_VERSION == 6
    with open_engine(small) as engine:
        assert not engine.data.lexical_rebuilt
