"""The match set (issue 17): what a query matches, in every mode, and everything built on it.

Real index, real model (the session's ~320 demo papers); the web checks go over HTTP to a
real uvicorn server. Expected sets are computed independently of the engine's own query
building: from the papers' text in the store, from Tantivy queries written by hand, and
from exact cosines of the stored vectors.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterator, Sequence

import httpx
import pytest
import tantivy
from lxml import etree

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_schema import STOP_WORDS
from papersift.engine.match import (
    SPLIT_ALWAYS_UP_TO,
    SPLIT_DEPTH,
    MatchRule,
    at_least,
    keyword_query,
)
from papersift.engine.query import Clause, parse_user_query
from papersift.engine.results import Filters, Mode, SearchRequest, SearchResult
from papersift.engine.search import SearchEngine, open_engine
from papersift.engine.writer_lock import writer_lock
from papersift.indexer.build import embed_backlog, import_files
from tests.corpus import make_config, sample_records, write_jsonl
from tests.search_checks import exact_cosines, record_facet_counts, zscore_cut

pytest_plugins = ["tests.web_fixtures"]

MODES: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")


def every_hit(engine: SearchEngine, request: SearchRequest) -> tuple[SearchResult, list[str]]:
    """The first page and the ids of every hit over all pages."""
    first = engine.search(request)
    ids = [h.paper.arxiv_id for h in first.hits]
    for page in range(2, first.pages + 1):
        ids += [
            h.paper.arxiv_id for h in engine.search(dataclasses.replace(request, page=page)).hits
        ]
    return first, ids


def word_pair(engine: SearchEngine) -> tuple[str, str]:
    """Two words that co-occur in more papers than one page of 10 holds but also appear
    apart: the pair of a few candidates with the most papers holding both."""
    lex = engine.data.lexical
    pairs = [
        ("language", "model"),
        ("citation", "analysis"),
        ("machine", "translation"),
        ("speech", "recognition"),
        ("neural", "networks"),
        ("information", "retrieval"),
    ]
    counted = []
    for word_a, word_b in pairs:
        both, _ = lex.parse(f'+"{word_a}" +"{word_b}"')
        either, _ = lex.parse(f'"{word_a}" "{word_b}"')
        n_both, n_either = lex.count(both), lex.count(either)
        if 0 < n_both < n_either:
            counted.append((n_both, word_a, word_b))
    if not counted or max(counted)[0] <= 10:
        pytest.skip("no suitable word pair in the sample")
    _, word_a, word_b = max(counted)
    return word_a, word_b


# -- nothing matches --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_nonsense_matches_nothing_in_every_mode(engine: SearchEngine, mode: Mode) -> None:
    result = engine.search(SearchRequest("xkqzvwp flurbish", mode=mode))
    assert result.total == 0 and result.hits == () and result.pages == 1
    assert all(sum(f.count for f in v) == 0 for v in result.facets.values())


@pytest.mark.parametrize("mode", MODES)
def test_absent_arxiv_id_says_so(engine: SearchEngine, mode: Mode) -> None:
    result = engine.search(SearchRequest("9999.99999", mode=mode))
    assert result.total == 0 and result.hits == ()
    assert result.missing_id == "9999.99999"
    assert any(
        "not in this index" in w and "arxiv.org/abs/9999.99999" in w for w in result.warnings
    )


@pytest.mark.parametrize(
    ("query", "binding"),
    [
        ("pipeline parallelism for training large models", "band"),  # near 2401.10241
        ("language models", "zscore"),  # a broad query: most papers are somewhat like it
    ],
)
def test_semantic_matches_are_close_papers(
    engine: SearchEngine, built_config: Config, query: str, binding: str
) -> None:
    """Every semantic hit reaches the floor, the band below the best and the z-score over
    the query's similarity to every paper, by the exact cosine of its stored vector; the
    set is exactly the papers that do. Each query is one whose set a different rule cuts."""
    cfg = built_config.search
    assert cfg.semantic_floor > 0 and cfg.semantic_band > 0 and cfg.semantic_zscore > 0
    result = engine.search(SearchRequest(query, mode="semantic", page_size=100))
    exact = list(exact_cosines(engine.data, engine.data.embedder.embed_query(query)).values())
    best = max(exact)
    assert best >= cfg.semantic_gate
    rules = {
        "floor": cfg.semantic_floor,
        "band": best - cfg.semantic_band,
        "zscore": zscore_cut(exact, cfg.semantic_zscore),
    }
    cut = max(rules.values())
    assert rules[binding] == cut
    near = sum(abs(c - cut) < 1e-5 for c in exact)  # float noise at the edge
    assert abs(result.total - sum(c >= cut for c in exact)) <= near
    assert 0 < result.total < len(exact)  # the rules cut something


def test_gate_under_the_best_match_admits_nothing(built_config: Config) -> None:
    """A gate above the query's closest paper: semantic mode matches nothing."""
    search = dataclasses.replace(built_config.search, semantic_gate=0.99, cache_size=0)
    eng = open_engine(dataclasses.replace(built_config, search=search))
    try:
        assert eng.search(SearchRequest("word sense disambiguation", mode="semantic")).total == 0
        hybrid = eng.search(SearchRequest("word sense disambiguation", mode="hybrid"))
        keyword = eng.search(SearchRequest("word sense disambiguation", mode="keyword"))
        assert hybrid.total == keyword.total  # only the keyword matches are left
    finally:
        eng.close()


# -- keyword rules ----------------------------------------------------------------------


def test_free_words_all_required_up_to_three(engine: SearchEngine) -> None:
    a, b = word_pair(engine)
    lex = engine.data.lexical
    both, _ = lex.parse(f'+"{a}" +"{b}"')
    result, ids = every_hit(engine, SearchRequest(f"{a} {b}", mode="keyword"))
    assert result.total == lex.count(both) == len(set(ids))


def test_most_words_beyond_three(engine: SearchEngine) -> None:
    rule = MatchRule(3, 0.75)
    assert [rule.required(n) for n in (1, 2, 3, 4, 5, 8, 12)] == [1, 2, 3, 3, 3, 6, 9]
    a, b = word_pair(engine)
    lex = engine.data.lexical
    assert engine.search(SearchRequest(f"{a} {b} xkqzvwp", mode="keyword")).total == 0
    # Five words (the stop word counts for none), so three are needed: papers with any
    # three of the four real words, as a union of Tantivy conjunctions written by hand.
    c, d = [w for w in ("results", "data", "paper") if w not in (a, b)][:2]
    words = [a, b, c, d]
    triples = [[w for w in words if w != skip] for skip in words]
    expected, _ = lex.parse(" ".join("(" + " ".join(f'+"{w}"' for w in t) + ")" for t in triples))
    # A repeated word counts once: still five words.
    five = engine.search(SearchRequest(f"{a} {b} the {c} {d} {a} xkqzvwp", mode="keyword"))
    assert five.total == lex.count(expected) > 0


def assert_scores_alike(
    lex: LexicalIndex, got: tantivy.Query, want: tantivy.Query, more_than: int
) -> None:
    """``got`` matches the papers ``want`` matches (more than ``more_than`` of them), each
    with the same score up to float sums in another order."""

    def scores(q: tantivy.Query) -> dict[int, float]:
        ids, values, _ = lex.search(q, lex.num_docs)
        return dict(zip(ids, values, strict=True))

    have, expected = scores(got), scores(want)
    assert len(expected) > more_than and have.keys() == expected.keys()
    assert all(abs(have[d] - expected[d]) < 1e-5 * max(1.0, expected[d]) for d in expected)


@pytest.mark.parametrize(
    "text",
    [
        "neural machine translation",
        "IL-10 and tumour necrosis",
        "graph-based learning",
        "the state of the art in parsing",
        "models model modelling citation",
        "end-to-end learning of speech models",  # "end" twice: the parser counts it once
    ],
)
def test_any_word_ranking_scores_as_the_parsers_query(engine: SearchEngine, text: str) -> None:
    """Hybrid ranks its keyword candidates by one flat disjunction of the free words'
    terms (Tantivy can skip with block-max WAND there); every paper must score as under the
    query parser's own per-word query of the same words, stop words scored but optional."""
    lex = engine.data.lexical
    parsed = parse_user_query(text)
    built = keyword_query(lex, parsed, MatchRule(), categories={}, author=lambda t: t)
    assert built.ranking is not None and built.ranking is not built.query
    free = [c for c in parsed.clauses if c.text.lower() not in ("the", "of", "in", "and")]
    stop = [c for c in parsed.clauses if c not in free]
    words = " ".join(c.tantivy_string() for c in dict.fromkeys(free))
    expected, errors = lex.parse(f"+({words}) " + " ".join(c.tantivy_string() for c in stop))
    assert not errors
    flat_part = str(built.ranking).split("Must, ")[-1] if stop else str(built.ranking)
    assert flat_part.count("BooleanQuery") == 1, "the free words are not one flat disjunction"

    assert_scores_alike(lex, built.ranking, expected, more_than=10)


@pytest.mark.parametrize(
    "text",
    [
        "end-to-end learning of speech recognition models",
        "learning model data network method",
        "model OR method learning data network results",
        '"neural network" training data model results',
        "the analysis of the model and data in learning",
    ],
)
def test_match_query_scores_as_tantivys_minimum_should_match(
    engine: SearchEngine, text: str
) -> None:
    """The match query ``keyword_query`` builds (split, with flat "any of" branches) holds
    the papers, with the scores, of Tantivy's own minimum-should-match query over the parsed
    free clauses, stop words scored but optional."""
    lex = engine.data.lexical
    parsed = parse_user_query(text)
    built = keyword_query(lex, parsed, MatchRule(), categories={}, author=lambda t: t)
    assert 1 < built.required < built.free_terms and built.query is not None

    def stop_only(c: Clause) -> bool:
        words = re.findall(r"\w+", c.text.lower())
        return bool(words) and all(w in STOP_WORDS for w in words)

    groups = list(parsed.groups())
    free = [g for g in groups if len(g) > 1 or not stop_only(g[0])]
    stop = [g[0] for g in groups if len(g) == 1 and stop_only(g[0])]

    def clause(group: Sequence[Clause]) -> tantivy.Query:
        parts = [lex.parse(c.tantivy_string())[0] for c in group]
        return parts[0] if len(parts) == 1 else tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, q) for q in parts]
        )  # fmt: skip

    should = tantivy.Occur.Should
    at_least_k = tantivy.Query.boolean_query(
        [(should, clause(g)) for g in free], built.required
    )  # fmt: skip
    optional = [(should, lex.parse(c.tantivy_string())[0]) for c in stop]
    expected = tantivy.Query.boolean_query([(tantivy.Occur.Must, at_least_k), *optional])

    assert_scores_alike(lex, built.query, expected, more_than=3)


@pytest.mark.parametrize(
    "sizes",
    [
        [1000, 1, 1, 1, 1], [1, 1000, 400, 1, 1], [5, 4, 3, 2, 1], [1, 1, 1, 1, 1000],
        [1000, 1, 1, 1, 1, 1, 1], [5, 4, 3, 2, 1, 1, 1], [1, 1, 1, 1, 2, 3, 1000],
        [1000, 100, 1, 1, 1, 1, 1],  # one dominant word, then a set of 6 that always splits
    ],
)  # fmt: skip
@pytest.mark.parametrize("flat", [False, True])
def test_minimum_should_match_split_scores_alike(
    engine: SearchEngine, sizes: list[int], flat: bool
) -> None:
    """``at_least`` splits the set on its most common clause: always for up to
    ``SPLIT_ALWAYS_UP_TO`` clauses, beyond that while one has more postings than the others
    together; with each clause's flat terms, its "any of" branches are one flat union.
    Whatever the sizes say, every paper must match and score as under Tantivy's own
    minimum-should-match query."""
    lex = engine.data.lexical
    words = ["learning", "model", "network", "data", "language", "quantum", "field"][: len(sizes)]
    queries = [lex.parse(f'"{w}"')[0] for w in words]
    terms = [lex.word_terms([w]) for w in words] if flat else None

    dominant = max(sizes) > sum(sizes) - max(sizes)
    for k in (2, 3, 4):
        got = at_least(queries, sizes, k, terms)
        split = len(sizes) <= SPLIT_ALWAYS_UP_TO or dominant
        assert ("MustNot" in str(got)) == split, k
        if split and k == 2:  # "any of" the rest: one flat union when the terms are given
            assert (str(got) != str(at_least(queries, sizes, k))) == flat, k
        tantivys = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries], k)
        assert_scores_alike(lex, got, tantivys, more_than=5)


def test_or_joins_alternatives(engine: SearchEngine) -> None:
    a, b = word_pair(engine)
    lex = engine.data.lexical
    either, _ = lex.parse(f'"{a}" "{b}"')
    assert engine.search(SearchRequest(f"{a} OR {b}", mode="keyword")).total == lex.count(either)


def test_fielded_clauses_intersect(engine: SearchEngine) -> None:
    """``au:X cat:Y`` is X's papers in Y, counted from the store."""
    store = engine.data.store
    papers = list(store.get(list(range(store.count() + 50))).values())
    by_surname: Counter[tuple[str, str]] = Counter()
    for p in papers:
        for a in p.authors:
            surname = a.name.split()[-1]
            if re.fullmatch(r"[A-Za-z]{5,}", surname):
                for c in p.categories:
                    by_surname[(surname, c)] += 1
    surname, cat = next(
        k
        for k, _ in by_surname.most_common(200)
        if 0 < by_surname[k] < sum(1 for p in papers if k[1] in p.categories)
    )
    expected = {
        p.arxiv_id for p in papers
        if cat in p.categories and any(surname.lower() in a.name.lower().split() for a in p.authors)
    }  # fmt: skip
    for mode in MODES:
        result, ids = every_hit(engine, SearchRequest(f"au:{surname} cat:{cat}", mode=mode))
        assert set(ids) == expected and result.total == len(expected)
    all_in_cat = engine.search(SearchRequest(f"cat:{cat}", mode="keyword")).total
    assert all_in_cat > len(expected)


# -- totals, facets, pages and sorts agree ---------------------------------------------


@pytest.fixture(scope="module")
def few_candidates(built_config: Config) -> Iterator[SearchEngine]:
    """An engine whose retrievers contribute 10 candidates each: more keyword matches than
    it fetches (20) make hybrid count and sort its match set in Tantivy."""
    search = dataclasses.replace(built_config.search, candidates=10, cache_size=0)
    eng = open_engine(dataclasses.replace(built_config, search=search))
    yield eng
    eng.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which", ["default", "few_candidates"])
def test_totals_facets_and_pages_agree(
    request: pytest.FixtureRequest, which: str, mode: Mode
) -> None:
    engine: SearchEngine = request.getfixturevalue("engine" if which == "default" else which)
    a, b = word_pair(engine)
    if which == "few_candidates" and mode == "hybrid":
        wide = engine.search(SearchRequest(f"{a} {b}", mode="keyword"))
        # More keyword matches than the engine fetches (twice the candidates): the Tantivy
        # path is the one under test.
        assert wide.total > 20
    for query in (f"{a} {b}", f"{a} networks learning"):
        result, ids = every_hit(engine, SearchRequest(query, mode=mode, page_size=10))
        assert len(ids) == len(set(ids)) == result.total
        assert sum(f.count for f in result.facets["years"]) == result.total
        by_date, dated = every_hit(
            engine, SearchRequest(query, mode=mode, sort="newest", page_size=10)
        )
        if mode == "hybrid":  # close matches by meaning only (test_sorted_semantic_rule)
            assert set(dated) <= set(ids) and len(set(dated)) == by_date.total
        else:  # two words near each other (engine.near_words), as the note counts
            note = " ".join(w for w in by_date.warnings if w.startswith("sorted by"))
            left = sum(int(n.replace(",", "")) for n in re.findall(r"([\d,]+) more papers", note))
            assert set(dated) <= set(ids) and len(set(dated)) == by_date.total
            assert by_date.total + left == result.total
        published = [engine.paper(i).published for i in dated]  # type: ignore[union-attr]
        assert published == sorted(published, reverse=True)


def test_hybrid_counts_from_the_table_when_it_fetched_every_keyword_match(
    engine: SearchEngine, built_config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More keyword matches than candidates but no more than twice as many: hybrid has
    them all from its counted pass, so the fused list is the match set and the facet
    table counts it (no second Tantivy pass), as Tantivy would."""
    a, b = word_pair(engine)
    query = f"{a} {b}"
    matches, listed = every_hit(engine, SearchRequest(query, mode="keyword", page_size=100))
    keyword_ids = set(listed)
    assert 4 <= matches.total == len(keyword_ids)
    n = (matches.total + 1) // 2  # n < matches <= 2n
    search = dataclasses.replace(built_config.search, candidates=n, cache_size=0)
    eng = open_engine(dataclasses.replace(built_config, search=search))
    try:
        eng.facet_table.start()
        assert eng.facet_table.wait(timeout=60)
        lex = eng.data.lexical
        asked = record_facet_counts(monkeypatch, lex)
        result, ids = every_hit(eng, SearchRequest(query, mode="hybrid", page_size=10))
        assert ("categories", "years") not in asked
        assert len(ids) == len(set(ids)) == result.total and keyword_ids <= set(ids)
        docids = [eng.data.store.docid_of(i) for i in ids]
        want = lex.facets(
            lex.docids_for([d for d in docids if d is not None]), 30, ("categories", "years")
        )
        assert {k: result.facets[k] for k in want} == want
    finally:
        eng.close()


def test_last_page_is_the_last_the_window_allows(built_config: Config) -> None:
    config = dataclasses.replace(
        built_config, search=dataclasses.replace(built_config.search, max_window=30, cache_size=0)
    )
    eng = open_engine(config)
    try:
        result = eng.search(SearchRequest("", page_size=10))  # browse: every paper
        assert result.total > 30 and result.pages == 3
        assert len(eng.search(SearchRequest("", page=3, page_size=10)).hits) == 10
        with pytest.raises(Exception, match="result window"):
            eng.search(SearchRequest("", page=4, page_size=10))
    finally:
        eng.close()


def test_date_sorted_topic_search_and_its_feed_stay_on_topic(
    engine: SearchEngine, http: httpx.Client
) -> None:
    a, b = word_pair(engine)
    query = f"{a} {b}"
    _, members = every_hit(engine, SearchRequest(query, mode="hybrid"))
    qvec = engine.data.embedder.embed_query(query)
    floor = engine.config.search.semantic_floor
    newest = engine.search(SearchRequest(query, mode="hybrid", sort="newest"))
    for hit in newest.hits[:5]:
        text = f"{hit.paper.title} {hit.paper.abstract}".lower()
        docid = engine.data.store.docid_of(hit.paper.arxiv_id)
        vec = engine.data.vectors.vector(docid)  # type: ignore[arg-type]
        close = vec is not None and float(vec @ qvec) >= floor - 1e-5
        assert (a in text and b[:5] in text) or close, hit.paper.title
    feed = http.get("/rss/search.xml", params={"q": query})
    assert feed.status_code == 200
    items = etree.fromstring(feed.content).findall("./channel/item")
    assert items
    links = [i.findtext("link") or "" for i in items]
    arxiv_id = re.compile(r"/papers/([a-z-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})")
    ids = [m.group(1) for m in map(arxiv_id.search, links) if m]
    assert len(ids) == len(links)
    assert set(ids) <= set(members)
    assert ids[0] == newest.hits[0].paper.arxiv_id


# -- partial embedding ------------------------------------------------------------------


@pytest.fixture(scope="module")
def partial_config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """The sample imported, a tenth of it embedded."""
    root = tmp_path_factory.mktemp("partial")
    config = make_config(root)
    data = DataDir(config)
    import_files(data, [write_jsonl(root / "s.jsonl", sample_records())])
    embed_backlog(data, limit=30)
    data.close()
    return config


def test_partial_embedding_searches_by_keywords_and_warns(
    partial_config: Config, engine: SearchEngine
) -> None:
    eng = open_engine(partial_config)
    try:
        progress = eng.data.embedding_progress()
        embedded = progress.embedded
        assert 0 < embedded < progress.total
        # A paper that has no vector yet, found by its title in the default mode.
        browse = engine.search(SearchRequest("", page_size=100)).hits
        target = next(
            h.paper for h in browse
            if eng.data.vectors.vector(eng.data.store.docid_of(h.paper.arxiv_id) or -1) is None
            and len(h.paper.title.split()) >= 4
        )  # fmt: skip
        result = eng.search(SearchRequest(target.title))
        assert result.mode == "hybrid"  # the semantic side weighed by the share embedded
        assert result.hits[0].paper.arxiv_id == target.arxiv_id
        # No process embeds the backlog (no one holds the writer lock): no rate or time to go.
        assert any(
            w.startswith("not all papers are embedded yet: ")
            and f"{embedded:,}" in w
            and "to go" not in w
            and "papersift" not in w
            for w in result.warnings
        ), result.warnings
        with writer_lock(partial_config.data_dir, "a test embedding"):  # as `index` holds it
            running = eng.search(SearchRequest(target.title, page_size=5)).warnings
        assert any(w.startswith("embedding is under way: ") for w in running), running
        semantic = eng.search(SearchRequest(target.title, mode="semantic"))
        assert semantic.mode == "semantic"
        assert any("semantic search covers" in w for w in semantic.warnings)
    finally:
        eng.close()
    search = dataclasses.replace(partial_config.search, semantic_min_coverage=0.5)
    eng = open_engine(dataclasses.replace(partial_config, search=search))
    try:
        result = eng.search(SearchRequest(target.title))
        assert result.mode == "keyword" and result.hits[0].paper.arxiv_id == target.arxiv_id
        assert any("searched by keywords until 50%" in w for w in result.warnings)
    finally:
        eng.close()


# -- ids, names and long text -----------------------------------------------------------


def test_a_researchers_name_shows_their_card(engine: SearchEngine) -> None:
    people = engine.people
    found, _ = people.search("", limit=200)
    person = next(
        r for r in found if r.papers >= 2 and len(r.name.split()) == 2 and not r.collective
    )
    result = engine.search(SearchRequest(person.name))
    assert person.rid in [r.rid for r in result.researchers]
    assert engine.search(SearchRequest(f"{person.name} xkqzvwp")).researchers == ()


def test_researcher_filter_reads_names_as_au_does(engine: SearchEngine) -> None:
    found, _ = engine.people.search("", limit=200)
    person = next(
        r for r in found if r.papers >= 2 and len(r.name.split()) == 2 and not r.collective
    )
    given, surname = person.name.split()
    plain = engine.search(SearchRequest("", filters=Filters(researchers=(person.name,))))
    inverted = engine.search(
        SearchRequest("", filters=Filters(researchers=(f"{surname}, {given}",)))
    )
    au = engine.search(SearchRequest(f'au:"{person.name}"'))
    assert plain.total == inverted.total == au.total >= 2


def test_pasted_abstract_finds_its_paper(engine: SearchEngine) -> None:
    paper = next(h.paper for h in engine.search(SearchRequest("", page_size=100)).hits
                 if len(h.paper.abstract) > 1100)  # fmt: skip
    result = engine.search(SearchRequest(paper.abstract))
    assert result.hits[0].paper.arxiv_id == paper.arxiv_id
    assert any("long text" in w and "first" in w for w in result.warnings)


def test_a_short_pasted_abstract_is_a_text_too(engine: SearchEngine) -> None:
    """Over ``like_text_words`` words, a text under ``max_query_length`` characters is
    searched as papers like it: with half its words needed, little but itself matched."""
    papers = engine.search(SearchRequest("", page_size=100)).hits
    paper = next(h.paper for h in papers if 60 < len(h.paper.abstract.split()) < 120
                 and len(h.paper.abstract) < 1000)  # fmt: skip
    result = engine.search(SearchRequest(paper.abstract, mode="keyword"))
    assert result.hits[0].paper.arxiv_id == paper.arxiv_id and result.total > 1
    assert any(w.startswith("a long text: searched for papers like it") for w in result.warnings)
    words = " ".join(paper.abstract.split()[:40])  # a long question stays a query
    assert not any("long text" in w for w in engine.search(SearchRequest(words)).warnings)


def test_cited_sort_without_citations_is_explained(engine: SearchEngine) -> None:
    result = engine.search(SearchRequest("learning", sort="cited", mode="keyword"))
    assert result.total > 0
    assert any("citation count" in w for w in result.warnings)


# -- over HTTP --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_api_nonsense_and_absent_id(http: httpx.Client, mode: str) -> None:
    for q in ("xkqzvwp flurbish", "9999.99999"):
        body = http.get("/api/v1/search", params={"q": q, "mode": mode}).json()
        assert body["total"] == 0 and body["hits"] == [] and body["next"] is None
    body = http.get("/api/v1/search", params={"q": "9999.99999", "mode": mode}).json()
    assert body["missing_id"] == "9999.99999"


def test_api_long_text_is_a_query(http: httpx.Client, engine: SearchEngine) -> None:
    paper = next(h.paper for h in engine.search(SearchRequest("", page_size=100)).hits
                 if len(h.paper.abstract) > 1100)  # fmt: skip
    body = http.get("/api/v1/search", params={"q": paper.abstract}).json()
    assert body["hits"][0]["paper"]["id"] == paper.arxiv_id
    too_long = http.get("/api/v1/search", params={"q": "word " * 5000})
    assert too_long.status_code == 400


def test_api_pages_agree_with_totals(http: httpx.Client, engine: SearchEngine) -> None:
    a, b = word_pair(engine)
    for mode in MODES:
        params = httpx.QueryParams({"q": f"{a} {b}", "mode": mode, "page_size": 5})
        url: str | None = f"/api/v1/search?{params}"
        seen: list[str] = []
        pages = total = 0
        while url:
            body = http.get(url).json()
            pages, total = body["pages"], body["total"]
            seen += [h["paper"]["id"] for h in body["hits"]]
            url = body["next"]
        assert len(seen) == len(set(seen)) == total
        assert pages == -(-total // 5)


@pytest.mark.parametrize("mode", MODES)
def test_stop_words_are_not_highlighted(engine: SearchEngine, mode: Mode) -> None:
    a, b = word_pair(engine)
    result = engine.search(SearchRequest(f"the {a} of {b} in a", mode=mode, page_size=50))
    assert result.hits
    marked = {
        m.lower()
        for h in result.hits
        for m in re.findall(r"<b>(.*?)</b>", h.title_html + h.abstract_html)
    }
    assert marked and not marked & {"the", "of", "in", "a"}


@pytest.mark.parametrize("mode", MODES)
def test_search_page_for_nothing_says_what_to_do(http: httpx.Client, mode: str) -> None:
    r = http.get("/search", params={"q": "xkqzvwp flurbish", "mode": mode})
    assert r.status_code == 200
    page = etree.fromstring(r.content, etree.HTMLParser())
    assert not page.cssselect(".hit, .result")
    assert page.cssselect(".empty li a")  # the suggestions
    absent = http.get("/search", params={"q": "9999.99999", "mode": mode})
    links = etree.fromstring(absent.content, etree.HTMLParser()).xpath("//a/@href")
    assert "https://arxiv.org/abs/9999.99999" in links


def test_minimum_should_match_split_depth_is_bounded(engine: SearchEngine) -> None:
    """A long query whose every word outnumbers all the rarer ones together would split
    into 2^n branches; below ``SPLIT_DEPTH`` splits the rest is left to Tantivy, and the set
    and its scores stay Tantivy's own."""
    lex = engine.data.lexical
    words = "learning model network data language quantum field theory method results "
    words += "analysis system energy paper"
    queries = [lex.parse(f'"{w}"')[0] for w in words.split()]
    sizes = [2**i for i in range(len(queries))]  # each more than all the smaller together
    got = at_least(queries, sizes, 7)
    assert 0 < str(got).count("MustNot") < 2**SPLIT_DEPTH <= 64  # not 1,715 branches

    tantivys = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries], 7)
    assert_scores_alike(lex, got, tantivys, more_than=3)
