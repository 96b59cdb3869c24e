"""The one search entry point: keyword, semantic and hybrid search with filters, facets, sorts.

In keyword mode Tantivy pages and counts the matches; their categories and years come from
the facet table (``engine.facet_table``) when the ranked pass fetched all of them, else from
Tantivy. In semantic and hybrid mode each retriever contributes up to ``search.candidates``
papers (both under the same filters); the fused list is what the user pages through, so its
length is the total and its facets are counted over exactly those papers. In keyword and
hybrid relevance order the few papers whose title holds the query as a phrase come first,
one whose whole title is the query first of all (``engine.title_match``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Container
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from papersift.core.config import Config
from papersift.engine import fusion
from papersift.engine.background import similarity_cut
from papersift.engine.catalog import Catalog
from papersift.engine.datadir import DataDir
from papersift.engine.date_notes import date_notes
from papersift.engine.direct import direct_answer
from papersift.engine.empty_clauses import empty_clause_notes
from papersift.engine.facet_table import FacetTable
from papersift.engine.hits import make_hits
from papersift.engine.hybrid_side import hybrid_left_out, hybrid_match_query, keyword_tail
from papersift.engine.id_list import id_list_answer
from papersift.engine.like_text import similar_to_text
from papersift.engine.list_facets import (
    CATEGORIES_YEARS,
    NO_FACETS,
    PEOPLE_WINDOW,
    Facets,
    institution_facet,
    over_list,
    total_of,
)
from papersift.engine.match import keyword_members
from papersift.engine.plan import LeftOut, Plan, make_plan, sorted_note
from papersift.engine.ranking import EMPTY, Ranking, ranks_on_page
from papersift.engine.researcher_table import ResearcherTable
from papersift.engine.result_cache import ResultCache
from papersift.engine.results import FacetCount, Filters, Hit, Mode, SearchRequest, SearchResult
from papersift.engine.semantic_side import (
    query_background,
    semantic_candidates,
    semantic_matches,
    unfiltered_reference,
)
from papersift.engine.title_match import titles_first
from papersift.engine.umlauts import Umlauts
from papersift.engine.why import Evidence

# Keyword matches fetched with the page (and their count, in the same pass): when that is
# all of them, their categories and years are counted from the facet table. 2,000 covers
# 90% of 200 title queries at 663k papers, for 0.2 ms more than fetching 200.
KEYWORD_WINDOW = 2000


class SearchEngine(Catalog):
    """Answers search requests over one data directory; safe to share across threads.

    With :class:`~papersift.engine.catalog.Catalog`'s lookups this is the whole surface the
    server, feeds and CLI use; close it (or use it as a context manager) when done."""

    def __init__(self, data: DataDir) -> None:
        super().__init__(data)
        self._refresh_lock = threading.Lock()
        self._refreshed_at = 0.0
        self.cache = ResultCache(self.config.search.cache_size)
        self.facet_table = FacetTable(data.store.path)  # built after the first fused search
        self.researcher_table = ResearcherTable(data.store.path)  # read after the first search
        self.umlauts = Umlauts()  # query words' other spellings, read from the papers
        # Second thread of one query (a facet count, the keyword side of hybrid); it never
        # submits work itself, so a query waiting on it cannot deadlock.
        self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2, thread_name_prefix="query")

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.data.close()

    def __enter__(self) -> SearchEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def generation(self) -> tuple[object, ...]:
        """Changes whenever an answer may change: the lexical and vector indexes and the
        researcher identities (the institution registry has its own ``version``)."""
        data = self.data
        return (
            data.lexical.generation, data.vectors_generation, data.people_generation,
            data.graph.generation,
        )  # fmt: skip

    def refresh(self, min_interval: float = 0.0) -> bool:
        """See papers another process committed (``DataDir.refresh``), at most every
        ``min_interval`` seconds; returns whether anything changed."""
        with self._refresh_lock:
            now = time.monotonic()
            if now - self._refreshed_at < min_interval:
                return False
            self._refreshed_at = now
            return self.data.refresh()

    def similar_text(
        self, text: str, filters: Filters, page: int = 1, page_size: int | None = None
    ) -> SearchResult:
        """Papers nearest in meaning to a pasted text (``engine.like_text``)."""
        return similar_to_text(self, text, filters, page, page_size)

    # -- search --------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResult:
        """Answer one request. Raises QueryError for a request outside the allowed bounds."""
        start = time.perf_counter()
        data = self.data
        key = (
            request, data.lexical.generation, data.vectors_generation, data.people_generation,
            data.graph.generation,
        )  # fmt: skip
        cached = self.cache.get(key)
        if cached is not None:
            return replace(cached, took_ms=(time.perf_counter() - start) * 1000)
        result = self._search(request, start)
        self.cache.put(key, result)
        self.researcher_table.follow(data.people_generation)
        return result

    def _search(self, request: SearchRequest, start: float) -> SearchResult:
        """The answer to ``request``, or to its spelling suggestion when only that matches."""
        result = self._answer(request, start)
        # Only a sure suggestion is searched instead (``engine.spelling.Suggestion``).
        if result.total or result.suggestion is None or not result.suggestion_sure:
            return result
        if not request.autocorrect:
            return result
        fixed = self._answer(replace(request, query=result.suggestion, autocorrect=False), start)
        if not fixed.total:  # e.g. filters that leave nothing either way: say so as typed
            return result
        return replace(fixed, request=request, suggestion=result.suggestion,
                       corrected=result.suggestion)  # fmt: skip

    def _answer(self, request: SearchRequest, start: float) -> SearchResult:
        cfg = self.config.search
        size = request.checked_size(cfg)
        mode: Mode = request.mode or cfg.default_mode  # type: ignore[assignment]
        direct = direct_answer(self, request, mode, size, start)
        direct = direct or id_list_answer(self, request, mode, size, start)  # several ids
        if direct is not None:
            return direct
        plan = make_plan(self, request, size)
        by_words: int | None = None  # hybrid: the matches holding the query's words
        # Sorted other than by relevance: the looser matches by meaning and by words.
        left_out = LeftOut()
        if plan.mode == "keyword":
            # Relevance order's matches counted on the pool thread meanwhile, when the list
            # sorted by date is stricter (``engine.rarer_words``).
            lex, rarer = self.data.lexical, plan.rarer
            loose = rarer and self._pool.submit(lex.count, lex.combine(rarer.loose, plan.filt))
            hits, total, facets, reach = self._keyword(plan)
            left_out = LeftOut(words=loose.result() - total if loose else 0)
        else:
            hits, total, facets, reach, by_words, left_out = self._fused(plan)
        reason = plan.rarer.reason if plan.rarer is not None else ""
        warnings = (*plan.warnings, *sorted_note(plan.sort, total, by_words, left_out, reason))
        if not total:  # which required clause or date filter matches nothing by itself
            warnings += tuple(empty_clause_notes(self.data.lexical, self.data.store, plan.parsed))
            warnings += tuple(date_notes(self.data.lexical, plan.request.filters))
        return SearchResult(
            request=request,
            mode=plan.mode,
            hits=tuple(hits),
            total=total,
            page=request.page,
            page_size=size,
            facets=facets,
            warnings=tuple(dict.fromkeys(warnings)),
            took_ms=(time.perf_counter() - start) * 1000,
            reachable=min(reach, cfg.max_window // size * size),
            researchers=plan.researchers,
            suggestion=plan.suggestion.query if plan.suggestion else None,
            suggestion_sure=plan.suggestion is not None and plan.suggestion.sure,
            facet_window=PEOPLE_WINDOW if total > PEOPLE_WINDOW else None,
        )

    def _keyword(self, plan: Plan) -> tuple[list[Hit], int, Facets, int]:
        lex = self.data.lexical
        q = plan.keyword.query
        combined = lex.combine(q, plan.filt)
        offset = (plan.request.page - 1) * plan.size
        table = self.facet_table.current(self.data.store.seq)
        # Categories and years count every match. Most queries match a few hundred papers:
        # the ranked pass fetches up to KEYWORD_WINDOW of them with its count, and when
        # that is all of them the facet table counts them, where a second Tantivy pass
        # (an aggregation) would evaluate the query again: 2.6 ms of a 10.5 ms keyword
        # search at 663k papers (bench/RESULTS.md). Browsing (no words) matches most of
        # the index, so Tantivy counts it on a pool thread meanwhile, as do all queries
        # until the table is built (Tantivy releases the GIL).
        counts = (
            self._pool.submit(lex.facets, combined, 30, CATEGORIES_YEARS)
            if q is None or table is None else None
        )  # fmt: skip
        fetch = KEYWORD_WINDOW if counts is None else PEOPLE_WINDOW  # counted by Tantivy
        limit = max(fetch, offset + plan.size)
        top, top_scores, total = lex.search(combined, limit, 0, plan.sort)
        first = list(plan.titles)
        keyword = Ranking.of(top, top_scores)
        ranked = titles_first(keyword, first, plan.whole_titles)
        # Researchers and institutions count the first PEOPLE_WINDOW results when there
        # are more: over 100k matches those high-cardinality counts took 75% of a keyword
        # query at 663k papers.
        window = ranked.ids[:PEOPLE_WINDOW].tolist()  # every match when there are no more
        # Tantivy counts the institutions on a pool thread until the table is built.
        insts = (
            self._pool.submit(institution_facet, lex, window, None)
            if table is None and lex.has_terms("institutions") else None
        )  # fmt: skip
        researchers = self._researcher_facet(window)
        lists = {"keyword": keyword, "title": ranked.head(len(first))}
        by_score = plan.sort == "relevance"
        evidence = replace(plan.evidence(top_scores if by_score else ()), keyword_ranked=by_score)
        page = ranked.pairs(offset, offset + plan.size)
        ranks = ranks_on_page(lists, page)
        # Every paper of ``top`` is a match; the title rule may put first one that is not.
        extra = set(first) - set(top) if first else set()
        page_ids = [d for d, _ in page]
        known = [d for d in page_ids if d not in extra]
        by_words = keyword_members(lex, combined, page_ids, known) if q is not None else None
        hits = make_hits(self.data, page, q, {}, ranks, evidence, plan.parsed.all_text, by_words)
        if counts is not None:
            counted = counts.result()
        elif total <= len(top):  # every match is in hand
            assert table is not None
            counted = table.counts(top)
        else:
            counted = lex.facets(combined, 30, CATEGORIES_YEARS)
        total += len(set(first) - set(top)) if total <= len(top) else 0
        institutions = (
            insts.result() if insts is not None else institution_facet(lex, window, table)
        )
        facets = {**counted, "researchers": researchers, "institutions": institutions}
        if table is None:
            self.facet_table.start()  # after the answer, as in _over_list
        return hits, total, facets, total

    def _fused(self, plan: Plan) -> tuple[list[Hit], int, Facets, int, int | None, LeftOut]:
        """Semantic and hybrid: the semantic list above the floor, in hybrid fused with the
        keyword candidates (both lists as retrieved, so the normalisation sees the same
        scores as without a floor) and cut to the match set. Then how many of the matches
        hold the query's words when they may be the fewer (None: semantic mode, or there
        are more of them than semantic candidates), and how many papers matching by
        meaning alone relevance order would list beside them (``Plan.relevance_zscore``)."""
        cfg = self.config.search
        lex = self.data.lexical
        n = cfg.candidates
        q = plan.keyword.query
        # The keyword side runs on the pool thread while the query is embedded and the
        # vectors searched (both release the GIL).
        hybrid = plan.mode == "hybrid" and q is not None
        keyword_side = lex.combine(q, plan.filt) if hybrid else None
        # Fusion ranks the candidates of any free word (as it was tuned on SciFact: ranking
        # by the matches alone cost 0.017 nDCG@10); the match rules then decide who stays.
        ranking_side = lex.combine(plan.keyword.ranking, plan.filt) if hybrid else None
        lexical: Future[tuple[list[int], list[float], int]] | None = None
        ranked: Future[tuple[list[int], list[float]]] | None = None
        if keyword_side is not None and ranking_side is not None:
            ranked = self._pool.submit(lex.top, ranking_side, n)  # uncounted
            if plan.keyword.ranking is not q:
                # The matches, up to twice the candidates, counted in the same pass (a
                # minimum-should-match query visits every match anyway): when that is all
                # of them, the fused list is the match set and the facet table counts it,
                # where Tantivy would evaluate the query again to count it.
                lexical = self._pool.submit(lex.search, keyword_side, 2 * n)
        # Relevance order's keyword matches when the list's are stricter: up to 2n of
        # them, counted (1.2 ms more than counting at 663k; 50 of 53 sets fit).
        loose_matches = (
            self._pool.submit(lex.search, lex.combine(plan.rarer.loose, plan.filt), 2 * n)
            if hybrid and plan.rarer is not None else None
        )  # fmt: skip
        qvec = self.data.embedder.embed_query(plan.semantic_text)
        candidates = semantic_candidates(self.data, qvec, plan.restrict, n)
        reference = (
            unfiltered_reference(self.data, qvec, plan.constraint, n) if plan.filt is not None
            else None
        )  # fmt: skip
        background = query_background(self.data, qvec, plan.rule.zscore)
        cut = similarity_cut(background, plan.rule.zscore) if background else None
        semantic = semantic_matches(candidates, plan.rule, reference, cut)
        looser = None  # the semantic matches under relevance order's rule, when stricter here
        if plan.relevance_zscore is not None and background is not None:
            loose_cut = similarity_cut(background, plan.relevance_zscore)
            looser = semantic_matches(candidates, plan.rule, reference, loose_cut)
        offset = (plan.request.page - 1) * plan.size
        sem_scores = candidates.scores.tolist()
        if keyword_side is None or ranked is None:  # semantic
            evidence = plan.evidence((), sem_scores, background=background)
            answer = self._whole_list(semantic, plan, {"semantic": candidates}, evidence)
            return *answer, None, LeftOut()
        rd, rs = ranked.result()
        # The keyword matches (the first ones), and whether they are all of them.
        if lexical is None:
            kd, every_match = rd, len(rd) < n
            matched = len(kd)
        else:
            kd, _, matched = lexical.result()
            every_match = matched <= len(kd)
        keyword = Ranking.of(rd, rs)
        if cfg.fusion == "rrf":
            weight = plan.semantic_share
            fused = fusion.rrf_ranking(keyword, candidates, cfg.rrf_k, weight)
        else:
            weight = cfg.convex_weight * plan.semantic_share
            fused = fusion.convex_ranking(keyword, candidates, weight)
        evidence = plan.evidence(rs, sem_scores, (cfg.fusion, weight, cfg.rrf_k), background)
        matches = np.asarray(kd, np.int64)
        # isin by a table of the docids' range, not by sorting: 60 against 400 us for lists
        # of 2,000 and 3,000 docids.
        held = np.concatenate((matches, semantic.ids))
        fused = fused.where(np.isin(fused.ids, held, kind="table"))
        # Matches below every ranked candidate follow, scored 0.
        fused = fused.then(matches[~np.isin(matches, fused.ids, kind="table")])
        fused = titles_first(fused, plan.titles, plan.whole_titles)
        lists = {"keyword": keyword, "semantic": candidates, "title": fused.head(len(plan.titles))}
        # Keyword matches not in hand; with the rarer-words rule, relevance order's.
        unfetched = None if every_match else keyword_side
        loose = loose_matches.result() if loose_matches is not None else None
        left_out = hybrid_left_out(lex, plan, looser, semantic, matches, matched, loose, unfetched)
        if every_match:  # the list is the set, its keyword matches all in hand
            answer = self._whole_list(fused, plan, lists, evidence, set(kd))
            return *answer, len(matches), left_out
        match_q = hybrid_match_query(lex, keyword_side, matches, fused)
        counts = self._pool.submit(lex.facets, match_q, 30, CATEGORIES_YEARS)
        if plan.sort == "relevance":
            page = fused.pairs(offset, offset + plan.size)
            if len(page) < plan.size:  # past the fused list: the rest of the keyword matches
                page += keyword_tail(lex, keyword_side, len(kd), fused, offset, plan.size)
        else:  # the whole match set by date or citations, as keyword mode sorts it
            ids, scores = lex.top(match_q, plan.size, offset, plan.sort)
            page = list(zip(ids, scores, strict=True))
        window = fused.ids[:PEOPLE_WINDOW].tolist()
        table = self.facet_table.current(self.data.store.seq)
        facets = {"institutions": institution_facet(lex, window, table)}
        facets["researchers"] = self._researcher_facet(window)
        facets.update(counts.result())
        total = total_of(facets, lambda: lex.count(match_q))
        ranks = ranks_on_page(lists, page)
        by_words = keyword_members(lex, keyword_side, [d for d, _ in page], kd)
        hits = make_hits(self.data, page, q, {}, ranks, evidence, plan.parsed.all_text, by_words)
        # More keyword matches than semantic candidates: they are most of the list.
        return hits, total, facets, total, None, left_out

    def _whole_list(
        self, matches: Ranking, plan: Plan, lists: dict[str, Ranking], evidence: Evidence,
        by_words: Container[int] | None = None,
    ) -> tuple[list[Hit], int, Facets, int]:  # fmt: skip
        """The answer when ``matches`` (relevance order) is the whole match set; ``lists``:
        the retrievers' lists, whose ranks each hit shows; ``by_words``: every keyword
        match, in hybrid mode."""
        facets, ordered = (
            self._over_list(matches, plan.sort) if len(matches) else (NO_FACETS, EMPTY)
        )
        offset = (plan.request.page - 1) * plan.size
        page = ordered.pairs(offset, offset + plan.size)
        q = plan.keyword.query
        ranks = ranks_on_page(lists, page)
        hits = make_hits(self.data, page, q, {}, ranks, evidence, plan.parsed.all_text, by_words)
        return hits, len(matches), facets, len(matches)

    def _over_list(self, fused: Ranking, sort: str) -> tuple[Facets, Ranking]:
        """Facets of a fused list and the list in ``sort`` order (``engine.list_facets``)."""
        table = self.facet_table.current(self.data.store.seq)
        lex = self.data.lexical
        answer = over_list(fused, sort, lex, table, self._pool, self._researcher_facet)
        if table is None:
            # Started only now: the build holds the GIL for a second or so, which would
            # otherwise hold up this (often the server's first) answer.
            self.facet_table.start()
        return answer

    def _researcher_facet(self, docids: list[int]) -> tuple[FacetCount, ...]:
        """The researchers of these papers: from the in-memory table once it reflects the
        current identities, from SQLite until then (``engine.researcher_table``)."""
        table = self.researcher_table.current(self.data.people_generation)
        return table.facet(docids) if table is not None else self.people.facet(docids)


def open_engine(config: Config) -> SearchEngine:
    """Open the data directory of ``config`` for searching (it must exist)."""
    data = DataDir(config, create=False)
    data.sync_lexical()
    return SearchEngine(data)
