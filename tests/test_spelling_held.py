"""Did you mean for a word some papers hold (``engine.spelling.likely_typo``): a typo held by
a paper or a few gets the word it misspells when that word is held by far more papers and
is the typo with a letter left out or two swapped; a query that matches nothing is searched
as the suggestion only when far more papers still hold it. Real index of real demo papers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.spelling import APPLY_RATIO, OFFER_RATIO, likely_typo, rare_cap
from papersift.indexer.build import import_files
from tests.corpus import demo_records, write_jsonl
from tests.search_checks import engine_with

TYPO_PAPER = "2602.04705"  # its abstract spells "desinged" (the only demo paper that does)


def _holding(word: str, records: list[dict[str, str]]) -> list[dict[str, str]]:
    pattern = re.compile(rf"\b{word}\b")
    return [r for r in records if pattern.search(f"{r['title']} {r['abstract']}".lower())]


@pytest.fixture
def designed(fresh_config: Config) -> Config:
    """The paper that spells "desinged" and 60 demo papers that spell "designed"."""
    records = demo_records()
    chosen = [r for r in records if r["id"] == TYPO_PAPER] + _holding("designed", records)[:60]
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(Path(fresh_config.base_dir) / "d.jsonl", chosen)])
    data.close()
    return fresh_config


def test_a_typo_some_papers_hold_is_offered_the_word(designed: Config) -> None:
    """Before, a word any paper held got no suggestion below 100,000 papers (its floor was
    0): "desinged" searched for its one paper alone."""
    with engine_with(designed, cache_size=0) as engine:
        lex = engine.data.lexical
        held, near = lex.postings(["desinged"]), lex.postings(["designed"])
        assert held == 1 == rare_cap(lex) and OFFER_RATIO * held <= near < APPLY_RATIO
        result = engine.search(SearchRequest("desinged", mode="keyword"))
        assert result.total == 1 and result.suggestion == "designed"
        assert result.corrected is None  # its own paper, as typed
        # Matching nothing, it is not searched as "designed": 60 papers are too few to be sure.
        none = engine.search(SearchRequest("desinged +retrieval", mode="keyword"))
        assert none.total == 0 and none.suggestion == "designed +retrieval"
        assert none.corrected is None


def test_a_rare_real_word_is_left_alone(engine: SearchEngine) -> None:
    """ "Basel" (Basel III, one paper) is a letter from "based" (held by half the papers, far
    more than a typo needs): a letter changed, not left out, so no suggestion, and a query
    that matches nothing is not searched as another."""
    lex = engine.data.lexical
    assert lex.postings(["basel"]) == 1 and lex.postings(["based"]) >= OFFER_RATIO
    assert not likely_typo("basel", 1, "based", lex.postings(["based"]), OFFER_RATIO)
    for query in ("basel", "basel +dialogue"):
        result = engine.search(SearchRequest(query, mode="keyword"))
        assert result.suggestion is None and result.corrected is None, query
    assert engine.search(SearchRequest("basel +dialogue", mode="keyword")).total == 0


@pytest.mark.parametrize(
    ("word", "held", "near", "near_held", "offered", "applied"),
    [
        # Counts at 663k papers (bench/.cache/scale-full), the session-35 review's words.
        ("transfomer", 14, "transformer", 43_551, True, True),  # a letter left out
        ("langauge", 8, "language", 63_065, True, True),  # two swapped
        ("modle", 7, "model", 282_454, True, True),
        ("acylic", 21, "acyclic", 1_987, True, False),  # offered only
        ("radion", 1, "radio", 5_578, False, False),  # a letter added: another word
        ("stau", 3, "star", 5_667, False, False),  # four letters
        ("seyfert", 42, "seifert", 963, False, False),  # a letter changed
        ("cdge", 1, "edge", 20_333, False, False),  # another first letter
        ("succintly", 16, "succinctly", 692, False, False),  # too few more papers
    ],
)
def test_likely_typo(
    word: str, held: int, near: str, near_held: int, offered: bool, applied: bool
) -> None:
    assert likely_typo(word, held, near, near_held, OFFER_RATIO) is offered
    assert likely_typo(word, held, near, near_held, APPLY_RATIO) is applied
