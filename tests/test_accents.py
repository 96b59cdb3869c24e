"""TeX accents read as letters and letters folded to ASCII: the conversion on the forms
arXiv's metadata uses, other TeX left alone, and keyword search over a real index finding
a word however it is written (TeX, Unicode, plain ASCII), highlighted and explained."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papersift.core.accents import accented, fold_same_length
from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine
from papersift.indexer.build import import_files
from tests.corpus import demo_records, write_jsonl


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        ('Schr\\"odinger equation', "Schrödinger equation"),
        ('Schr\\"{o}dinger and Schr{\\"o}dinger', "Schrödinger and Schrödinger"),
        ("Erd\\H{o}s-R\\'enyi graphs", "Erdős-Rényi graphs"),
        ("Poincar\\'e, Fr\\'echet, B\\\"uchi", "Poincaré, Fréchet, Büchi"),
        ("Bj{\\o}rn, Bj\\o rn, Stra\\ss e, Pawe\\l{}", "Bjørn, Bjørn, Straße, Paweł"),
        ("\\v{C}ech and \\v Cech, \\c{c}a", "Čech and Čech, ça"),
        ("Mart\\'{\\i}nez, Mart\\'\\i nez, na\\\"\\i ve", "Martínez, Martínez, naïve"),
        ('\\textit{\\"o} and \\\\"o', '\\textit{ö} and \\\\"o'),
        ("Fran\\c cois, \\d{h}adith", "François, ḥadith"),
        # Other TeX stays as it is: math, commands that start like an accent's.
        ("$\\rho \\cite{x} \\beta \\in \\int f\\'(x)$ \\rm \\lambda", None),
        ("$\\L^2$, $x\\~y$, \\(\\O(n)\\), \\int f \\d x, \\Huge \\delta", None),
        ('an escaped \\" quote', None),
    ],
)
def test_accents_become_letters(tex: str, text: str | None) -> None:
    assert accented(tex) == (tex if text is None else text)


@given(st.text(alphabet=st.characters(blacklist_characters="\\")))
def test_text_without_a_backslash_is_untouched(text: str) -> None:
    assert accented(text) is text


def test_folding_keeps_offsets() -> None:
    text = "Schrödinger, Erdős, Čech, Łukasz, naïve, ḥadith 日本語"
    folded = fold_same_length(text)
    assert folded == "Schrodinger, Erdos, Cech, Lukasz, naive, hadith 日本語"
    assert len(folded) == len(text)


@pytest.fixture
def accented_config(fresh_config: Config) -> Config:
    """Demo papers, four of them retitled with one word written four ways."""
    records = demo_records()[:40]
    titles = [
        'Schr\\"odinger bridges for generative models',
        "Schrödinger operators on graphs",
        "A Schrodinger equation solver",
        'Nonlinear Schr\\"{o}dinger waves',
    ]
    for i, title in enumerate(titles):
        records[i] = {**records[i], "title": title}
    source = write_jsonl(fresh_config.base_dir / "a.jsonl", records)
    data = DataDir(fresh_config)
    import_files(data, [source])
    data.close()
    return fresh_config


@pytest.mark.parametrize("query", ["schrodinger", "Schrödinger", 'Schr\\"odinger', "SCHRÖDINGER"])
def test_every_spelling_finds_every_spelling(accented_config: Config, query: str) -> None:
    with open_engine(accented_config) as engine:
        result = engine.search(SearchRequest(query, mode="keyword", page_size=10))
        assert result.total == 4, [h.paper.title for h in result.hits]
        for hit in result.hits:
            assert "<b>Schr" in hit.title_html and "dinger</b>" in hit.title_html, hit.title_html
            assert hit.why is not None and hit.why.matched.get("title"), hit.why
