"""Did you mean (``engine.spelling``): a query word no paper holds gets the held word it most
likely misspells, and the answer carries the query with it put in, on the result, in the
API, on the search page and in the CLI. Real index (the session's ~320 demo papers); the
expected word is found by reading every paper's words, as the automata spare the engine."""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import lxml.html
import pytest
from rapidfuzz.distance import OSA
from starlette.testclient import TestClient

from papersift.core.accents import accented
from papersift.core.config import Config
from papersift.engine.lexical_schema import name_analyzer
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.spelling import max_edits, suggest

pytest_plugins = ["tests.web_fixtures"]

# Misspellings of words the demo papers hold: a swap, a letter left out, one added, one
# wrong, two edits, a misspelt suffix the stemmer does not know, a capital.
TYPOS = ("langauge", "translaton", "modle", "sematic", "lingustics", "summarizaton",
         "Grammer", "machien", "dialouge", "reasonnig", "embeddigns")  # fmt: skip


def nearest(engine: SearchEngine, word: str) -> str | None:
    """The reference: of every word in every paper, the fewest edits from ``word``, then
    the most papers holding it."""
    fold = name_analyzer()
    typed = fold.analyze(word)[0]
    limit = max_edits(typed)
    papers = engine.data.store.get(range(engine.data.store.seq + 1)).values()
    words = {w for p in papers for w in fold.analyze(
        " ".join([accented(p.title), accented(p.abstract), *(a.name for a in p.authors)])
    )}  # fmt: skip
    lex = engine.data.lexical
    near = [(OSA.distance(w, typed), -lex.postings([w]), w) for w in words - {typed}]
    return min((n for n in near if n[0] <= limit), default=(0, 0, None))[2]


def test_short_words_get_fewer_edits() -> None:
    assert [max_edits(w) for w in ("gan", "grph", "graphs", "transformer")] == [0, 1, 2, 2]


def test_a_typo_gets_the_word_reading_every_paper_finds(engine: SearchEngine) -> None:
    lex, store = engine.data.lexical, engine.data.store
    for typo in TYPOS:
        assert not lex.postings([typo]), typo  # no paper holds it
        want = nearest(engine, typo)
        assert want is not None and lex.postings([want]), typo
        assert suggest(lex, store, typo) == want, typo
    assert suggest(lex, store, "langauge") == "language"


def test_the_answer_carries_the_query_spelt_right(engine: SearchEngine) -> None:
    """Each word no paper holds is replaced, in its case; fields, quotes and signs stay as
    typed; the note naming the words stays (searched as typed: ``tests/test_autocorrect.py``
    has the results of the suggestion)."""
    query = 'Langauge ti:"machine translation" +model -survey translaton'
    for mode in ("keyword", "hybrid"):
        result = engine.search(SearchRequest(query, mode=mode, autocorrect=False))  # type: ignore[arg-type]
        assert result.suggestion == 'Language ti:"machine translation" +model -survey translation'
        note = "no paper holds 'Langauge', 'translaton': check the spelling"
        assert note in result.warnings


def test_no_suggestion_without_a_near_word_or_a_typo(engine: SearchEngine) -> None:
    lex, store = engine.data.lexical, engine.data.store
    far = "xkqzvwp language"
    result = engine.search(SearchRequest(far, mode="keyword"))
    assert result.suggestion is None and nearest(engine, "xkqzvwp") is None
    assert "no paper holds 'xkqzvwp': check the spelling" in result.warnings
    assert suggest(lex, store, "xkqzvwp") is None
    # Fewer than four letters: nearly every string is an edit or two from some word.
    assert not lex.postings(["qzx"]) and suggest(lex, store, "qzx") is None
    right = engine.search(SearchRequest("language translation"))
    assert right.suggestion is None and right.total > 0
    assert not any("no paper holds" in w for w in right.warnings)


def test_the_page_links_to_the_search_spelt_right(client: TestClient) -> None:
    """The link keeps the other parameters, goes back to page 1 and escapes what the query
    holds; its text is the corrected query as typed."""
    q = 'langauge <b>"x&y"</b>'
    r = client.get("/search", params={"q": q, "mode": "keyword", "sort": "newest", "page": 2})
    assert r.status_code == 200
    doc = lxml.html.document_fromstring(r.text)
    (note,) = doc.find_class("did-you-mean")
    (link,) = note.findall(".//a")
    fixed = 'language <b>"x&y"</b>'
    assert link.text_content() == fixed and not note.findall(".//b")
    url = urlsplit(link.get("href"))
    assert url.path == "/search"
    assert parse_qs(url.query) == {"q": [fixed], "mode": ["keyword"], "sort": ["newest"]}
    assert "&lt;b&gt;" in r.text  # escaped, not markup
    plain = lxml.html.document_fromstring(client.get("/search", params={"q": "language"}).text)
    assert not plain.find_class("did-you-mean")


def test_the_api_has_the_field(client: TestClient) -> None:
    def body(q: str) -> dict[str, object]:
        return dict(client.get("/api/v1/search", params={"q": q}).json())

    assert body("langauge models")["suggestion"] == "language models"
    assert body("language models")["suggestion"] is None
    spec = client.get("/openapi.json").json()
    field = spec["components"]["schemas"]["SearchResponse"]["properties"]["suggestion"]
    assert "Did you mean" in field["description"]
    assert "suggestion" in spec["components"]["schemas"]["SearchResponse"]["required"]
    md = client.get("/search", params={"q": "langauge"}, headers={"Accept": "text/markdown"})
    assert "> Did you mean: [language](" in md.text


@pytest.mark.slow
def test_the_cli_says_it_in_one_line(built_config: Config) -> None:
    config = str(built_config.base_dir / "config.toml")
    out = subprocess.run(
        [sys.executable, "-m", "papersift", "search", "--config", config, "langauge models"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert [line for line in out.stdout.splitlines() if "did you mean" in line] == [
        "did you mean: language models"
    ]
    out = subprocess.run(
        [sys.executable, "-m", "papersift", "search", "--config", config, "--json", "langauge"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert json.loads(out.stdout)["suggestion"] == "language"
