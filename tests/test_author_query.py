"""``au:`` through identities: every spelling of a name reaches the same demo papers."""

from __future__ import annotations

import pytest

from papersift.engine.author_query import name_key, rewrite_author_clauses
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.snapshot import record_to_paper
from tests.corpus import sample_records


def _papers_with(key: str) -> set[str]:
    """Sample papers with an author of this normalised name: the expected answer, computed
    from the corpus itself rather than through the index."""
    return {
        p.arxiv_id
        for p in map(record_to_paper, sample_records())
        if any(a.key == key for a in p.authors)
    }


@pytest.mark.parametrize(
    ("key", "spellings"),
    [
        (
            "vincent lariviere",  # spelled "Vincent Larivière" and "Vincent Lariviere"
            [
                'au:"Vincent Larivière"', 'au:"Vincent Lariviere"', 'au:"VINCENT LARIVIERE"',
                r'au:"Vincent Larivi\`ere"', r'au:"V. Larivi{\`e}re"', 'au:"Larivière, Vincent"',
                'au:"Lariviere, V."', "au:lariviere", "author:Larivière",
            ],
        ),
        (
            "lovro subelj",
            [
                'au:"Lovro Šubelj"', r'au:"Lovro \v{S}ubelj"', r'au:"\v{S}ubelj, L."',
                'au:"L. Subelj"', "au:subelj", "au:Šubelj",
            ],
        ),
        (
            "enrique orduna malea",  # "Orduña-Malea" and "Orduna-Malea"
            [
                'au:"Enrique Orduña-Malea"', r'au:"Enrique Ordu\~na-Malea"',
                'au:"Orduna-Malea, Enrique"', 'au:"Orduña-Malea, E."', 'au:"E. Orduna Malea"',
            ],
        ),
        (
            "lutz bornmann",
            ['au:"Lutz Bornmann"', 'au:"Bornmann, Lutz"', 'au:"Bornmann, L."', "au:BORNMANN"],
        ),
    ],
)  # fmt: skip
def test_au_spellings_reach_the_same_papers(
    engine: SearchEngine, key: str, spellings: list[str]
) -> None:
    expected = _papers_with(key)
    assert len(expected) >= 2
    for q in spellings:
        result = engine.search(SearchRequest(query=q, mode="keyword", page_size=100))
        assert {h.paper.arxiv_id for h in result.hits} == expected, q
        assert not result.warnings, q


def test_au_given_names_are_compared_as_identities_compare_them(engine: SearchEngine) -> None:
    def found(q: str) -> set[str]:
        hits = engine.search(SearchRequest(query=q, mode="keyword", page_size=100)).hits
        return {h.paper.arxiv_id for h in hits}

    # A missing middle name is compatible; initials reach the spelled-out name.
    pereira = _papers_with("fernando pereira") | _papers_with("fernando c n pereira")
    assert len(pereira) == 2
    assert found('au:"Fernando Pereira"') == pereira
    assert found('au:"Pereira, F. C. N."') == pereira
    # A different first name is another person.
    assert found('au:"Vincent Bornmann"') == set()
    assert found('au:"Lariviere, W."') == set()
    # Signs keep their meaning; the clause constrains hybrid search too.
    both = found('+au:"Bornmann, L." +au:"Leydesdorff, Loet"')
    assert both and both < found('au:"Bornmann, L."')
    assert not found('+au:"Bornmann, L." -au:"Bornmann, Lutz"')
    hybrid = engine.search(SearchRequest(query='citation impact +au:"Bornmann, L."', mode="hybrid"))
    assert hybrid.mode == "hybrid" and hybrid.hits
    assert {h.paper.arxiv_id for h in hybrid.hits} <= found('au:"Lutz Bornmann"')


@pytest.mark.parametrize(
    ("query", "rewritten"),
    [
        (r'au:"Bal\'azs K\'egl"', 'au:"Balázs Kégl"'),
        (r"au:Bal\'azs", 'au:"Balázs"'),
        (r'au:"G\"odel, Kurt" logic', 'au:"Kurt Gödel" logic'),  # a TeX umlaut inside quotes
        ('author:"Kégl, B."', 'author:"B. Kégl"'),
        ('+au:"Smith, John, Jr." -ti:"a, b"', '+au:"John Smith Jr." -ti:"a, b"'),  # ti: untouched
        ("au:kegl cat:cs.LG", "au:kegl cat:cs.LG"),
        ('au:"Kegl," x', 'au:"Kegl," x'),  # nothing after the comma: left to the parser
        ("tau:x, y", "tau:x, y"),  # not an au: field
    ],
)
def test_rewrite_author_clauses(query: str, rewritten: str) -> None:
    assert rewrite_author_clauses(query) == rewritten
    assert name_key("Kégl, Balázs") == name_key(r"Bal\'azs K\'egl") == "balazs kegl"
