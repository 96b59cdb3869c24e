"""Why each hit is a result (engine.why): the ranks and scores against the retrievers run
independently (BM25 lists from Tantivy, exact numpy cosine), the fused parts against the
hit's score, the words found against Tantivy's own highlighting, and the same over the real
API (strictly decoded) and the search page (parsed, escaped)."""

from __future__ import annotations

import re
import sys

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from papersift.core.accents import fold_same_length
from papersift.engine.lexical_schema import text_analyzer
from papersift.engine.plan import make_plan
from papersift.engine.query import parse_user_query
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.why import analysed, query_words, stem_roots, text_terms, text_tokens
from papersift.server.schemas import SearchResponse
from tests.corpus import demo_records
from tests.search_checks import exact_cosines
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

QUERY = "dependency parsing"


def exact_cosine(engine: SearchEngine, text: str) -> list[tuple[int, float]]:
    """Every embedded paper by exact cosine to ``text``, best first (ties by docid)."""
    cosines = exact_cosines(engine.data, engine.data.embedder.embed_query(text))
    return sorted(cosines.items(), key=lambda p: (-p[1], p[0]))


def test_hybrid_ranks_scores_and_fused_parts(engine: SearchEngine) -> None:
    request = SearchRequest(QUERY, mode="hybrid", page_size=20)
    result = engine.search(request)
    assert result.mode == "hybrid" and result.hits
    data = engine.data
    plan = make_plan(engine, request, 20)
    n = engine.config.search.candidates
    ranking = data.lexical.combine(plan.keyword.ranking, plan.filt)
    kd, ks, _ = data.lexical.search(ranking, n)  # the keyword side, run again
    k_rank = {d: i + 1 for i, d in enumerate(kd)}
    semantic = exact_cosine(engine, plan.semantic_text)[:n]
    s_rank = {d: i + 1 for i, (d, _) in enumerate(semantic)}
    docid_of = {data.store.docid_of(h.paper.arxiv_id): h for h in result.hits}
    both = 0
    for docid, hit in docid_of.items():
        why = hit.why
        assert why is not None and docid is not None
        assert why.keyword_rank == k_rank.get(docid)
        if why.keyword_rank is not None:
            assert why.keyword_score == pytest.approx(ks[why.keyword_rank - 1])
        assert why.semantic_rank == s_rank.get(docid)
        if why.semantic_rank is not None:
            assert why.similarity == pytest.approx(semantic[why.semantic_rank - 1][1], abs=1e-4)
        both += why.keyword_rank is not None and why.semantic_rank is not None
        assert why.fused is not None and why.fused.method == "convex"
        if not why.title_rule:  # the title rule's papers keep their own score
            assert why.fused.keyword + why.fused.semantic == pytest.approx(hit.score, abs=1e-6)
    assert both  # the query has papers both retrievers found


def test_keyword_mode_score_is_bm25_and_no_semantic_side(engine: SearchEngine) -> None:
    result = engine.search(SearchRequest("translation", mode="keyword", page_size=10))
    assert result.hits
    for rank, hit in enumerate(result.hits, 1):
        why = hit.why
        assert why is not None
        assert why.keyword_rank == rank and why.keyword_score == pytest.approx(hit.score)
        assert why.semantic_rank is None and why.similarity is None and why.fused is None


def _stems(html_text: str) -> set[str]:
    """The analysed terms of the words Tantivy highlighted in a snippet."""
    analyzer = text_analyzer()
    return {t for w in re.findall(r"<b>(.*?)</b>", html_text) for t in analyzer.analyze(w)}


@pytest.mark.parametrize("query", ["translation", "neural machine translation", "parsing grammar"])
def test_title_words_found_agree_with_tantivy_highlighting(
    engine: SearchEngine, query: str
) -> None:
    """The title snippet covers the whole title, so its <b> words are the query terms the
    title holds: the words ``why`` reports for the title must be exactly those."""
    analyzer = text_analyzer()
    result = engine.search(SearchRequest(query, mode="hybrid", page_size=30))
    assert result.hits
    seen_title = False
    for hit in result.hits:
        assert hit.why is not None
        found = hit.why.matched.get("title", ())
        reported = {t for w in found for t in analyzer.analyze(w)}
        assert reported == _stems(hit.title_html), hit.paper.title
        seen_title |= bool(found)
        abstract_terms = set(analyzer.analyze(hit.paper.abstract))
        for word in hit.why.matched.get("abstract", ()):
            assert set(analyzer.analyze(word)) <= abstract_terms
        missing = {w for w in query.split() if w not in hit.why.matched.get("abstract", ())}
        for word in missing:  # a word not reported for the abstract is not in it
            assert not set(analyzer.analyze(word)) <= abstract_terms
    assert seen_title


def test_title_rule_and_filters_passed(engine: SearchEngine) -> None:
    paper = engine.paper("2401.10241")
    assert paper is not None
    category = paper.primary_category
    filters = Filters(categories=(category,))
    result = engine.search(SearchRequest(paper.title, mode="hybrid", filters=filters))
    first = result.hits[0]
    assert first.paper.arxiv_id == "2401.10241"
    assert first.why is not None and first.why.title_rule
    assert all(h.why is not None and not h.why.title_rule for h in result.hits[1:])
    assert first.why.filters == (f"category {category}",)
    r = engine.search(SearchRequest("parsing -speech au:zhu", mode="keyword"))
    assert r.hits
    for hit in r.hits:
        assert hit.why is not None
        assert hit.why.filters == ("-speech (excluded)", "au:zhu")


def test_api_why_is_declared_and_matches_the_engine(
    client: TestClient, engine: SearchEngine
) -> None:
    r = client.get("/api/v1/search", params={"q": QUERY, "mode": "hybrid", "page_size": 10})
    assert r.status_code == 200
    body = msgspec.json.decode(r.content, type=SearchResponse, strict=True)
    result = engine.search(SearchRequest(QUERY, mode="hybrid", page_size=10))
    assert [h.paper.id for h in body.hits] == [h.paper.arxiv_id for h in result.hits]
    for api_hit, hit in zip(body.hits, result.hits, strict=True):
        why, want = api_hit.why, hit.why
        assert why is not None and want is not None
        assert (why.keyword_rank, why.semantic_rank) == (want.keyword_rank, want.semantic_rank)
        assert why.similarity == pytest.approx(want.similarity, abs=1e-6)
        assert why.matched == {f: list(w) for f, w in want.matched.items()}
        assert why.fused is not None and why.fused.method == "convex"
    spec = client.get("/openapi.json").json()
    hit_schema = spec["components"]["schemas"]["Hit"]
    assert "why" in hit_schema["required"]


def test_standout_is_the_similaritys_zscore_over_every_paper(
    client: TestClient, engine: SearchEngine
) -> None:
    """``standout``: the hit's similarity in standard deviations above the query's mean
    similarity to every paper, by exact cosines; a paper matching by meaning only stands
    out at least by the rule's z-score; the API and the page carry it."""
    query = "language models"  # a broad query: the z-score rule binds (test_match_set)
    zscore = engine.config.search.semantic_zscore
    cosines = np.asarray([c for _, c in exact_cosine(engine, query)])
    mean, spread = cosines.mean(), cosines.std()
    by_words: set[str] = set()
    for n in (1, 2, 3):
        keyword = engine.search(SearchRequest(query, mode="keyword", page_size=100, page=n))
        by_words |= {h.paper.arxiv_id for h in keyword.hits}
    assert len(by_words) == keyword.total
    result = engine.search(SearchRequest(query, mode="hybrid", page_size=50, page=2))
    meaning_only = 0
    for hit in result.hits:
        why = hit.why
        assert why is not None
        if why.similarity is None:
            assert why.standout is None
            continue
        assert why.standout == pytest.approx((why.similarity - mean) / spread, abs=1e-4)
        if hit.paper.arxiv_id not in by_words:
            meaning_only += 1
            assert why.standout >= zscore - 1e-4
    assert meaning_only > 0
    r = client.get("/api/v1/search", params={"q": query, "mode": "hybrid", "page_size": 5})
    body = msgspec.json.decode(r.content, type=SearchResponse, strict=True)
    by_id = {h.paper.arxiv_id: h.why for h in engine.search(
        SearchRequest(query, mode="hybrid", page_size=5)).hits}  # fmt: skip
    for api_hit in body.hits:
        want = by_id[api_hit.paper.id]
        assert api_hit.why is not None and want is not None and want.standout is not None
        assert api_hit.why.standout == pytest.approx(want.standout, abs=1e-5)
    page = client.get("/search", params={"q": query, "mode": "hybrid"}).text
    assert "standard deviations above this query&#39;s average paper" in page or (
        "standard deviations above this query's average paper" in page
    )
    off = engine.search(SearchRequest(query, mode="keyword", page_size=5))
    assert all(h.why is not None and h.why.standout is None for h in off.hits)


def test_page_shows_why_in_a_disclosure_escaped(client: TestClient) -> None:
    hostile = 'parsing <b>x</b> "<script>alert(1)</script>"'
    r = client.get("/search", params={"q": hostile, "mode": "hybrid"})
    assert r.status_code == 200
    doc = parse_html(r.text)
    hits = doc.cssselect("li.hit")
    assert hits
    for li in hits:
        (details,) = li.cssselect("details.why")
        assert details.get("open") is None  # closed until asked
        assert details.cssselect("summary")[0].text_content().strip() == "Why this result"
        assert not details.cssselect("script, b")  # the query's markup stayed text
        terms = [dt.text_content().strip() for dt in details.cssselect("dt")]
        assert "Keywords" in terms and "Meaning" in terms and "Query words found" in terms
    words = " ".join(d.text_content() for d in doc.cssselect("details.why dd"))
    assert "parsing" in words


@pytest.mark.parametrize(
    "query",
    [
        "studies of happy parsing networks",
        "dying lies relational generalization hoping hopped",
        '"query expansion" BM25 retrieval-augmented',
        "ugly early only gently skies",
    ],
)
def test_candidate_tokens_miss_no_query_term(engine: SearchEngine, query: str) -> None:
    """Only tokens starting with a root are analysed: over every title and abstract of the
    corpus that finds exactly the query terms analysing the whole text finds."""
    words = query_words(parse_user_query(query))
    analyzer = text_analyzer()
    wanted = {t for _, f, terms in words.words if f != "au" for t in terms}
    store = engine.data.store
    papers = store.get(sorted(store.all_text_hashes()))
    assert len(papers) > 100
    hits = 0
    for paper in papers.values():
        for text in (paper.title, paper.abstract):
            full = set(analyzer.analyze(text)) & wanted
            assert set(text_terms(text, words.roots)) & wanted == full, text
            hits += bool(full)
    assert hits  # the corpus holds some of them


@pytest.mark.parametrize(
    ("text", "query"),
    [("Gauß–Bonnet theorem for a Straße network", "gauss strasse"),
     ("Gauss sums and the Strasse of Gauß", "gauß straße")],
)  # fmt: skip
def test_letters_the_index_folds_to_two(text: str, query: str) -> None:
    """ "ß" is "ss" to the index (as "æ" is "ae"): the words of a text found for a query are
    those the index holds, though tokens are found in the text folded one letter for one."""
    words = query_words(parse_user_query(query))
    wanted = {t for _, f, terms in words.words if f != "au" for t in terms}
    full = set(text_analyzer().analyze(text)) & wanted
    assert full == {"gauss", "strass"}
    assert set(text_terms(text, words.roots)) & wanted == full


def test_date_order_and_browsing(engine: SearchEngine, client: TestClient) -> None:
    """A keyword list in date order has no rank to explain; browsing has no disclosure."""
    r = engine.search(SearchRequest("translation", mode="keyword", sort="newest"))
    assert r.hits and all(h.why is not None and h.why.keyword_rank is None for h in r.hits)
    assert all(h.why is not None and h.why.keyword_score is None for h in r.hits)
    page = parse_html(
        client.get("/search", params={"q": "translation", "sort": "newest", "mode": "keyword"}).text
    )
    first = page.cssselect("li.hit details.why dd")[0].text_content()
    assert first.startswith("a match (listed by date")
    browse = parse_html(client.get("/search").text)
    assert browse.cssselect("li.hit") and not browse.cssselect("details.why")


_TOKEN = re.compile(r"[^\W_]+")


def old_text_tokens(low: str, roots: tuple[str, ...]) -> dict[int, str]:
    """``text_tokens`` as it was before short roots got expressions of their own: the
    reference the new one must agree with, offsets, tokens and their order (found in the
    text folded to ASCII letters, as the index folds it, and given as written)."""
    written, low = low, fold_same_length(low)
    tokens: dict[int, str] = {}
    for root in roots:
        at = low.find(root)
        while at != -1:
            if (at == 0 or not low[at - 1].isalnum()) and at not in tokens:  # a token's start
                token = _TOKEN.match(low, at)
                if token:
                    tokens[at] = written[at : token.end()]  # as written: the analyser folds it
            at = low.find(root, at + 1)
    return tokens


# Texts the demo corpus may lack: accents, other scripts, combining marks, digits that are
# not ASCII, underscores and punctuation at a token's edges, and text that is not lowercased.
ODD_TEXTS = (
    "On naïve Bayes: the Erdős–Rényi graph, Schrödinger's cat and a naïve-ion trap",
    "Über die Schrödingergleichung; ERDŐS számok, naïveté (naive, naïf) in 3D/2D",
    "τ-knowledge, β-decay, Ω(n log n), x² + y², Ⅻ and ⅷ; e\u0301cole vs école",
    "_ion ion_ i_on x_1 a-b a--b 'quoted' \"dq\" (paren)ion [i] {io} ion.ion,ion;ion",
    "İstanbul ΣΊΣΥΦΟΣ straße STRASSE ﬁne ｆｕｌｌ ١٢٣ 一二三 ९८ दिल्ली",
    "I/O, ion-ion, i.e. e.g. IoT ions ionic Ionization 1ion ion1 i1 1i 10 100 1000",
    "",
    "i",
    " i",
    "ii i ii",
)
ODD_QUERIES = (
    "naïve Bayes Erdős Schrödinger",
    "Erdős–Rényi graphs",
    "über naïve café école",
    "τ-knowledge β decay",
    "ion trap i/o IoT",
    "a b c d e x y z",
    "3d 2d 10 f1 top-k bm25",
    "dying lies ugly skies idly",
    "straße strasse İstanbul",
    "दिल्ली 一二三",
)
# Root sets no query makes, each with its own oddity.
ODD_ROOTS = (
    tuple("abcdefghijklmnopqrstuvwxyz0123456789"),
    ("i",),
    ("e",),
    ("t",),
    ("1",),
    ("io",),
    ("th",),
    ("in",),
    ("co", "con", "cons"),
    ("na", "naï", "naïv"),
    ("erd", "erdő", "ő"),
    ("schr", "schrö", "ö"),
    ("é", "e", "ec"),
    ("τ",),
    ("β",),
    ("ω",),
    ("ⅻ",),
    ("²",),
    ("x",),
    ("١",),
    ("一",),
    ("दि",),
    ("ß", "st"),
    ("-",),
    ("x_",),
    ("_",),
    ("a-b",),
    ("",),
    ("'s",),
    ("e\u0301",),
    ("\u0301",),
    ("i", "ion"),
    ("ion", "i"),
    ("ion", "ion", "io"),
    ("ii", "i"),
)


def _root_sets(titles: list[str]) -> list[tuple[str, ...]]:
    """Root sets as the search makes them (``query_words`` and ``stem_roots`` of the
    analysed query) for three words of every 25th title and the odd queries, then the odd
    root sets."""
    queries = []
    for i, title in enumerate(titles[::25]):
        words = title.split()
        start = i % max(1, len(words) - 2)
        queries.append(" ".join(words[start : start + 3]))
    sets = []
    for q in [*queries, *ODD_QUERIES]:
        sets += [query_words(parse_user_query(q)).roots, stem_roots(analysed(q))]
    return [*dict.fromkeys(s for s in sets if s), *ODD_ROOTS]


def test_text_tokens_as_before_on_the_corpus() -> None:
    """The tokens found for every root set are those the old ``text_tokens`` found (in the
    same order when the roots are sorted, as ``stem_roots`` gives them), in titles and
    abstracts of the demo corpus (every one that is not ASCII) lowercased as the callers
    do, and in odd texts also as they are."""
    records = demo_records()
    titles = [r["title"] for r in records]
    root_sets = _root_sets(titles)
    assert sum(len(r) == 1 for s in root_sets for r in s) > 20
    assert sum(len(r) == 2 for s in root_sets for r in s) > 20
    assert any(not r.isascii() for s in root_sets for r in s)
    texts = [t for i, r in enumerate(records) for t in (r["title"], r["abstract"])
             if i % 25 == 0 or not t.isascii()]  # fmt: skip
    lows = [t.lower() for t in (*texts, *ODD_TEXTS)] + list(ODD_TEXTS)
    assert sum(not low.isascii() for low in lows) > 50
    compared = found = 0
    for roots in root_sets:
        in_order = list(roots) == sorted(roots)  # as the search's are
        for low in lows:
            got, want = text_tokens(low, roots), old_text_tokens(low, roots)
            assert got == want, (roots, low)
            assert not in_order or list(got) == list(want), (roots, low)
            compared += 1
            found += len(want)
    assert compared > 100_000 and found > 200_000


def test_token_characters_are_isalnum() -> None:
    """``[^\\W_]``, which the expressions use for "alphanumeric", is ``str.isalnum``."""
    alnum = re.compile(r"[^\W_]")
    chars = map(chr, range(sys.maxunicode + 1))
    assert [c for c in chars if bool(alnum.fullmatch(c)) != c.isalnum()] == []


_LETTERS = "abeinost019 _-.,'()\n\tIÖïőöéßτΩ²Ⅻ\u0301İ一"


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_text_tokens_as_before_on_any_text(data: st.DataObject) -> None:
    text = data.draw(st.text(st.sampled_from(_LETTERS) | st.characters(), max_size=80))
    piece = st.integers(0, len(text)).flatmap(
        lambda i: st.integers(i, min(len(text), i + 4)).map(lambda j: text[i:j])
    )
    roots = tuple(data.draw(st.lists(piece | st.text(_LETTERS, max_size=3), max_size=6)))
    for low in (text, text.lower()):
        assert text_tokens(low, roots) == old_text_tokens(low, roots)
        ordered = tuple(sorted(set(roots)))  # as stem_roots gives them: the same order too
        want = old_text_tokens(low, ordered)
        assert list(text_tokens(low, ordered).items()) == list(want.items())


def test_page_says_a_keyword_candidate_is_no_keyword_match(client: TestClient) -> None:
    """Hybrid's keyword side ranks every paper holding any query word; one that lacks words
    the match rule asks for is listed by meaning, and its panel says so by its rank."""
    for query in ("statistical machine translation model", "neural dependency parsing", QUERY):
        params = {"q": query, "mode": "hybrid", "page_size": 50}
        hits = client.get("/api/v1/search", params=params).json()["hits"]
        loose = [
            i
            for i, h in enumerate(hits)
            if h["why"]["keyword_rank"] and not h["why"]["keyword_match"]
        ]
        if loose:
            break
    assert loose, "no keyword candidate listed by meaning in any query"
    doc = parse_html(client.get("/search", params=params).text)
    panels = [li.cssselect("details.why dd")[0].text_content() for li in doc.cssselect("li.hit")]
    assert len(panels) == len(hits)
    for i, (hit, text) in enumerate(zip(hits, panels, strict=True)):
        said = "not a keyword match" in text
        assert said is (i in loose), (query, i, text)
        if said:
            assert text.startswith(f"rank {hit['why']['keyword_rank']:,}")
