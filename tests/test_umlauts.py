"""A word papers also write with its umlauts spelled out is searched in both spellings
(``engine.umlauts``): "Schuetze" finds the papers by Hinrich Schütze, "Borner" those by
Katy Boerner.

Real index (keyword side) of the demo papers naming Börner, Schütze, Müller, Günther, Jörg
or Dörre in any spelling, and ~30 others; the expected sets are Tantivy queries written by
hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from papersift.core.accents import accented
from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest, Sort
from papersift.engine.search import SearchEngine, open_engine
from papersift.engine.umlauts import QUERY_WORDS, Umlauts
from papersift.indexer.build import import_files
from papersift.server.app import create_app
from tests.corpus import demo_records, make_config, sample_records, write_jsonl
from tests.search_checks import engine_with
from tests.test_rarest_word import docids, every_id, matches
from tests.web_helpers import serving

NAMES = re.compile(
    r"\b(?:b(?:ö|oe|o)rner|sch(?:ü|ue|u)tze|m(?:ü|ue|u)ller|g(?:ü|ue|u)nther|j(?:ö|oe|o)rg"
    r"|d(?:ö|oe|o)rre)\b",
    re.IGNORECASE,
)
SCHUETZE = '("schuetze" "schutze")'  # the index folds ü to u: "Schütze" is "schutze"
GUENTHER = '("guenther" "gunther")'


@pytest.fixture(scope="module")
def names_config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    root: Path = tmp_path_factory.mktemp("umlauts")
    config = make_config(root)
    fields = ("title", "abstract", "authors")
    named = [
        r for r in demo_records() if NAMES.search(" ".join(accented(r[f] or "") for f in fields))
    ]
    ids = {r["id"] for r in named}
    records = named + [r for r in sample_records(every=200) if r["id"] not in ids]
    data = DataDir(config)
    import_files(data, [write_jsonl(root / "names.jsonl", records)])
    data.close()
    return config


@pytest.fixture(scope="module")
def names(names_config: Config) -> Iterator[SearchEngine]:
    with open_engine(names_config) as engine:
        yield engine


def keyword(engine: SearchEngine, query: str, sort: Sort = "relevance") -> set[int]:
    """Every keyword match's docid, all pages read."""
    return docids(engine, every_id(engine, SearchRequest(query, mode="keyword", sort=sort)))


def test_the_other_spelling_is_read_from_the_papers(names: SearchEngine) -> None:
    lex, store = names.data.lexical, names.data.store
    umlauts = Umlauts()
    assert umlauts.other_spelling(lex, store, "Schuetze") == "Schütze"
    assert umlauts.other_spelling(lex, store, "Schütze") == "Schuetze"
    assert umlauts.other_spelling(lex, store, "schutze") == "schuetze"  # the case as typed
    assert umlauts.other_spelling(lex, store, "Borner") == "Boerner"
    assert umlauts.other_spelling(lex, store, "Guenther") == "Günther"
    # No paper writes "Mö" for the held "Mo", nor "dös"; "retrieval" has no e to drop or add.
    for word in ("Moe", "mo", "does", "retrieval", "IR"):
        assert umlauts.other_spelling(lex, store, word) is None, word
    assert lex.postings(["moe"]) and lex.postings(["mo"])  # both held: the papers decided


@pytest.mark.parametrize("typed", ["Schuetze", "Schütze", "Schutze"])
def test_either_spelling_finds_both(names: SearchEngine, typed: str) -> None:
    lex = names.data.lexical
    expected = matches(lex, SCHUETZE)
    assert len(expected) >= 5 and matches(lex, '"schuetze"') < expected
    assert matches(lex, '"schutze"') < expected
    result = names.search(SearchRequest(typed, mode="keyword"))
    assert result.total == len(expected)
    assert keyword(names, typed) == expected
    other = "Schütze" if typed == "Schuetze" else "Schuetze"
    assert f"'{typed}' is also written '{other}': both spellings are searched" in result.warnings


def test_a_hit_says_it_matched_the_word_as_typed(names: SearchEngine) -> None:
    """Whichever spelling its paper holds ("Günther", "Gunther" or "Guenther")."""
    result = names.search(SearchRequest("Guenther", mode="keyword", page_size=50))
    names_of = " ".join(a.name for h in result.hits for a in h.paper.authors)
    spelled = set(re.findall(r"G(?:ü|ue|u)nther", accented(names_of)))
    assert {"Günther", "Guenther"} <= spelled
    for hit in result.hits:
        assert hit.why and any("Guenther" in words for words in hit.why.matched.values())


def test_a_long_query_is_searched_as_typed(names: SearchEngine) -> None:
    """Over ``QUERY_WORDS`` words a query reads like a sentence: no other spelling, so one
    query cannot have the papers of many words read for their verdicts."""
    lex = names.data.lexical
    short = "Schuetze retrieval"
    long = "Schuetze " + " ".join(["retrieval"] * QUERY_WORDS)
    assert any("also written" in w for w in names.search(SearchRequest(short)).warnings)
    result = names.search(SearchRequest(long, mode="keyword"))
    assert not any("also written" in w for w in result.warnings)
    assert keyword(names, long) == matches(lex, '+"schuetze" +"retrieval"')


def test_the_rule_can_be_turned_off(names_config: Config) -> None:
    with engine_with(names_config, match_umlaut_spellings=False) as own:
        lex = own.data.lexical
        result = own.search(SearchRequest("Schuetze", mode="keyword"))
        assert keyword(own, "Schuetze") == matches(lex, '"schuetze"')
        assert not any("also written" in w for w in result.warnings)


def test_signed_and_fielded_words_take_both_spellings(names: SearchEngine) -> None:
    lex = names.data.lexical
    assert keyword(names, "language -Guenther") == matches(lex, f'+"language" -{GUENTHER}')
    assert keyword(names, "+Gunther") == matches(lex, GUENTHER)
    assert keyword(names, "au:Guenther") == matches(lex, "au:guenther au:gunther")
    # Both spellings typed: the query says how to weigh them, and nothing is added.
    result = names.search(SearchRequest("Guenther -Gunther", mode="keyword"))
    assert keyword(names, "Guenther -Gunther") == matches(lex, '+"guenther" -"gunther"')
    assert not any("also written" in w for w in result.warnings)


def test_a_phrase_takes_its_words_other_spellings(names: SearchEngine) -> None:
    lex = names.data.lexical
    expected = matches(lex, '"hinrich schuetze" "hinrich schutze"')
    assert matches(lex, '"hinrich schuetze"') < expected
    assert keyword(names, '"Hinrich Schuetze"') == expected
    result = names.search(SearchRequest('"Hinrich Schuetze"', mode="keyword"))
    note = "'Hinrich Schuetze' is also written 'Hinrich Schütze': both spellings are searched"
    assert note in result.warnings


def test_a_hyphenated_word_takes_its_parts_other_spellings(names: SearchEngine) -> None:
    """As "Debye-Hueckel" finds "Debye-Hückel" at 663k papers (7 -> 85): held whole in
    either spelling (``engine.hyphens``: every part, or the parts together), and sorted
    by date its parts stand together in either spelling."""
    lex = names.data.lexical
    either = '(+"hinrich" +"schuetze") (+"hinrich" +"schutze")'
    assert matches(lex, '+"hinrich" +"schuetze"') < matches(lex, either)
    assert keyword(names, "Hinrich-Schuetze") == matches(lex, either)
    together = '"hinrich schuetze" "hinrich schutze" "hinrichschuetze" "hinrichschutze"'
    assert keyword(names, "Hinrich-Schuetze", sort="newest") == matches(lex, together)
    result = names.search(SearchRequest("Hinrich-Schuetze", mode="keyword"))
    note = "'Hinrich-Schuetze' is also written 'Hinrich-Schütze': both spellings are searched"
    assert note in result.warnings


def test_a_sorted_two_word_query_holds_either_spelling_near(names_config: Config) -> None:
    """Sorted by date a two-word query's words must stand near each other
    (``engine.near_words``): in either spelling, or "Hinrich Schuetze" would list only the
    papers that write his name so."""
    with engine_with(names_config, match_all_sorted_from=1) as near:
        lex = near.data.lexical
        expected = matches(lex, f'+"hinrich" +{SCHUETZE}')
        assert matches(lex, '+"hinrich" +"schuetze"') < expected
        assert keyword(near, "Hinrich Schuetze", sort="newest") == expected


def test_the_api_says_which_spelling_it_added(names: SearchEngine, names_config: Config) -> None:
    with serving(create_app(names, names_config)) as url:
        answer = httpx.get(f"{url}/api/v1/search", params={"q": "Borner", "mode": "keyword"})
    assert answer.status_code == 200
    body = answer.json()
    assert "'Borner' is also written 'Boerner': both spellings are searched" in body["warnings"]
    assert body["total"] == len(matches(names.data.lexical, '"borner" "boerner"'))
    authors = [" ".join(a["name"] for a in h["paper"]["authors"]) for h in body["hits"]]
    assert any("Boerner" in a for a in authors) and any("Börner" in a for a in authors)
