"""A search request worked out once, before anything is retrieved: the parsed query and its
Tantivy queries (``engine.match``), the filters, the mode the index can answer in now, the
sort, the researchers the query names, and the warnings to show for each choice made."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import tantivy

from papersift.core.paper import parse_arxiv_id
from papersift.engine.author_query import (
    author_clause,
    compatible_researchers,
    name_key,
    rewrite_author_clauses,
)
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.match import (
    GraphClause,
    KeywordQuery,
    MatchRule,
    constraint_query,
    keyword_query,
)
from papersift.engine.query import Clause, ParsedQuery, parse_user_query
from papersift.engine.rarer_words import RarerWords, rarer_words
from papersift.engine.results import Filters, Mode, ResearcherRef, SearchRequest, Sort
from papersift.engine.spelling import Suggestion, did_you_mean, unheld_notes
from papersift.engine.title_match import title_matches
from papersift.engine.why import Evidence, filter_lines, query_words
from papersift.engine.writer_lock import writing

# What to do when no process embeds the backlog (no one holds the writer lock).

if TYPE_CHECKING:
    from papersift.engine.search import SearchEngine

NAMED_RESEARCHERS = 3  # researcher cards above the results of a query that is a name
# A pasted text's keyword side: a paper matches with this share of its words (as Lucene's
# more-like-this asks for some of a text's terms, not most).
LIKE_TEXT_FRACTION = 0.3


@dataclass(frozen=True, slots=True)
class Plan:
    request: SearchRequest
    mode: Mode  # the mode the index can answer in now
    size: int  # page size
    sort: Sort
    parsed: ParsedQuery
    semantic_text: str  # what the model reads
    rule: MatchRule
    keyword: KeywordQuery
    filt: tantivy.Query | None  # the filters
    restrict: tantivy.Query | None  # the filters and the required and excluded clauses
    constraint: tantivy.Query | None  # the required and excluded clauses alone
    titles: tuple[int, ...]  # papers the exact-title rule puts first (relevance order)
    whole_titles: tuple[int, ...]  # those of them whose whole title is the query: first of all
    semantic_share: float  # the semantic side's weight in fusion: the embedded share
    # Hybrid sorted other than by relevance: the z-score relevance order would use, where
    # ``rule`` holds the stricter one of ``[search] semantic_zscore_sorted`` (else None).
    relevance_zscore: float | None
    # Sorted other than by relevance, a long query's stricter keyword matches
    # (``engine.rarer_words``), which ``keyword.query`` then is; else None.
    rarer: RarerWords | None
    researchers: tuple[ResearcherRef, ...]
    warnings: tuple[str, ...]
    suggestion: Suggestion | None = None  # the query spelt as papers do (``engine.spelling``)

    def evidence(
        self, keyword: Sequence[float], semantic: Sequence[float] = (),
        fused: tuple[str, float, int] | None = None,
        background: tuple[float, float] | None = None,
    ) -> Evidence:  # fmt: skip
        """What ``engine.why`` reads for each hit: the lists' scores by rank, the fusion,
        the query's words, the filters (worked out once per request, for the page) and the
        query's similarity to the corpus (``engine.background``)."""
        method, weight, k = fused or (None, 1.0, 60)
        return Evidence(
            keyword, semantic, method, weight, k, query_words(self.parsed),
            filter_lines(self.request.filters, self.parsed), background=background,
        )  # fmt: skip


def make_plan(engine: SearchEngine, request: SearchRequest, size: int) -> Plan:
    """Work out ``request`` (already checked against the bounds) for ``engine``."""
    cfg = engine.config.search
    filters, warnings = canonical_filters(engine, request.filters)
    filt, unmatched = filter_query(engine, filters)
    warnings = unmatched + warnings
    categories = engine.category_lookup()  # cat: clauses read as the category filter reads them

    def author(text: str) -> str:
        return author_clause(engine.data.store, text)

    cfg_rule = MatchRule(
        cfg.match_all_up_to, cfg.match_fraction, cfg.semantic_floor, cfg.semantic_gate,
        cfg.semantic_band, cfg.semantic_zscore, cfg.match_rarest_up_to, cfg.match_word_forms,
    )  # fmt: skip
    text, rule = request.query, cfg_rule
    # A pasted abstract: papers like this text.
    like_text = len(text) > cfg.max_query_length or len(text.split()) > cfg.like_text_words
    if like_text:
        text = _cut(text, cfg.max_query_length)
        rule = replace(
            rule, fraction=LIKE_TEXT_FRACTION, all_up_to=min(rule.all_up_to, 2), rarest_up_to=0
        )
        tokens = engine.config.embedding.max_length
        warnings.append(
            "a long text: searched for papers like it; " + (
                f"the keyword side read its first {len(text):,} of {len(request.query):,} "
                f"characters, the model its first {tokens} tokens" if text is not request.query
                else f"the model read its first {tokens} tokens"
            )
        )  # fmt: skip
    parsed = parse_user_query(rewrite_author_clauses(text))  # TeX, "Kégl, B."
    warnings.extend(parsed.warnings)
    lex = engine.data.lexical
    if cfg.match_umlaut_spellings and not like_text:  # "Schroedinger" and "Schrödinger"
        parsed, spelled = engine.umlauts.alternatives(lex, engine.data.store, parsed)
        warnings.extend(spelled)
    if parsed.empty and text.strip():  # "(((", an emoji, a field with no value
        warnings.append("nothing in the query could be searched for; it was left out")
    warnings.extend(
        f"no papers in category '{c.text}' (cat:{c.text})" for c in parsed.clauses
        if c.field == "cat" and c.sign != "-" and c.text.lower() not in categories
    )  # fmt: skip
    semantic_text = (
        parse_user_query(request.query).semantic_text if text is not request.query
        else parsed.semantic_text
    )  # fmt: skip
    graph = graph_clause(engine)
    kq = keyword_query(lex, parsed, rule, categories=categories, author=author, graph=graph)
    warnings.extend(kq.warnings)
    # A word is held in any of its spellings ("Schroedinger": "Schrödinger").
    held = {sp[0]: sum(lex.postings([w]) for w in sp) for sp in kq.spellings if sp}
    unheld = [w for w, n in held.items() if not n]
    if unheld and not like_text:  # most often a typo, which the model reads past
        warnings.extend(unheld_notes(request.query, unheld))
    suggestion = None if like_text else did_you_mean(lex, engine.data.store, request.query, held)
    constraint = constraint_query(lex, parsed, categories=categories, author=author, graph=graph)
    restrict = lex.combine(constraint, filt) if constraint is not None else filt
    wanted: Mode = request.mode or cfg.default_mode  # type: ignore[assignment]
    if kq.common_only:
        # Nothing matches by meaning either, as the note says: in every mode, whatever
        # the model makes of "to be or not to be" (a gate it could reach by chance).
        rule = replace(rule, gate=math.inf)
    mode, share = usable_mode(
        engine, wanted, parsed, semantic_text, warnings, request.mode is not None,
        common_only=kq.common_only,
    )  # fmt: skip
    sort: Sort = request.sort
    # Nothing to rank by: browse, newest first (only exclusions: browse without them).
    browse = parsed.empty or parsed.only_negative
    if browse and sort == "relevance":
        sort = "newest"
    if sort == "cited" and not lex.has_citations():
        sort = "relevance" if not browse else "newest"
        warnings.append(
            f"no paper has a citation count yet (`papersift enrich` adds them); sorted by {sort}"
        )
    relevance_zscore = None
    if mode == "hybrid" and sort != "relevance" and cfg.semantic_zscore_sorted > rule.zscore:
        # Sorted by date or citations, a loose match by meaning would sit beside the best
        # matches instead of below them: only close ones are listed (bench/RESULTS.md).
        relevance_zscore = rule.zscore
        rule = replace(rule, zscore=cfg.semantic_zscore_sorted)
    rarer = None
    if mode != "semantic" and sort != "relevance" and not like_text:
        # Sorted by date, a loose match would sit beside the best ones: a query's matches
        # must hold every word while enough papers do (session 35), else its rarer words
        # (bench/RESULTS.md, session 31), and a hyphenated word's parts stand together.
        rarer = rarer_words(lex, kq, rule, cfg.match_common_above_sorted, cfg.match_all_sorted_from)
        kq = kq if rarer is None else replace(kq, query=rarer.query)
    titles: list[int] = []
    whole: list[int] = []
    if sort == "relevance" and mode != "semantic":
        store = engine.data.store
        titles, whole = title_matches(lex, store, parsed, restrict, cfg.title_phrase_max)
    named = named_researchers(engine, parsed) if request.page == 1 else ()
    return Plan(
        request, mode, size, sort, parsed, semantic_text, rule, kq, filt, restrict, constraint,
        tuple(titles), tuple(whole), share, relevance_zscore, rarer, named, tuple(warnings),
        suggestion,
    )  # fmt: skip


SORT_NAMES = {"newest": "date, newest first", "oldest": "date, oldest first", "cited": "citations"}


@dataclass(frozen=True, slots=True)
class LeftOut:
    """What a list sorted other than by relevance leaves out that relevance order lists:
    papers matching by meaning alone, less closely than ``[search] semantic_zscore_sorted``
    asks, and papers holding fewer of a long query's rarer words (``engine.rarer_words``)."""

    meaning: int = 0
    words: int = 0


def sorted_note(
    sort: Sort, total: int, by_words: int | None, left_out: LeftOut, reason: str = ""
) -> tuple[str, ...]:
    """One note for an answer sorted other than by relevance, saying what its order hides
    (empty when nothing): that most of a hybrid answer's papers match by meaning only
    (``by_words`` of the ``total`` match the query's words by the keyword rule; the others
    may hold some of them), mixed in with the rest where relevance order would put them
    after (in a corpus on one field they can be hundreds: bench/RESULTS.md, session 27);
    and what ``left_out`` counts (``reason``: what the papers left out for their words
    hold instead, ``RarerWords.reason``). In relevance order, only that none of a hybrid
    answer's papers matches the query's words, which nothing else on the page says
    ("reinforcement learning robotics" on the demo: 490 papers, none holding all three)."""
    meaning_only = (
        f"none of these {total:,} papers matches the query's words; they match by meaning only"
    )
    if sort == "relevance":
        return (meaning_only,) if by_words == 0 and total else ()
    parts = []
    if by_words is not None and 2 * (total - by_words) > total:
        if not by_words:
            parts.append(meaning_only)
        else:
            parts.append(
                f"{total - by_words:,} of these {total:,} papers match by meaning only, mixed "
                f"in with the {by_words:,} that match the query's words (keyword search lists "
                "those alone)"
            )
    more = []
    if left_out.words > 0:
        more.append(f"{left_out.words:,} more papers {reason}")
    if left_out.meaning > 0:
        more.append(
            f"{left_out.meaning:,} more papers match by meaning alone, less closely than these"
        )
    if more:
        parts.append("; ".join(more) + " (relevance order lists them too)")
    return (f"sorted by {SORT_NAMES[sort]}: " + "; ".join(parts),) if parts else ()


def usable_mode(
    engine: SearchEngine, mode: Mode, parsed: ParsedQuery, semantic_text: str,
    warnings: list[str], asked: bool = True, common_only: bool = False,
) -> tuple[Mode, float]:  # fmt: skip
    """The mode this query can run in now, with a warning for each fallback (a query of
    fielded clauses alone, ``au:x cat:y``, is keyword search without one unless the request
    ``asked`` for another mode), and the semantic side's weight in hybrid fusion: while the
    backlog embeds, the share embedded (on SciFact with 5-50% of the vectors this beat
    keywords alone: bench/RESULTS.md). A query of ``common_only`` words matches nothing in
    any mode: it is answered in the mode asked ("NOT the" as "the"), not read as a name."""
    if mode == "keyword":
        return mode, 1.0
    if parsed.empty:
        return "keyword", 1.0  # browsing: nothing to embed
    if not semantic_text and not common_only:
        if asked:
            warnings.append(f"{mode} search needs free text; searched by keywords")
        return "keyword", 1.0
    if mode == "hybrid" and not common_only and reads_as_name(engine.data.lexical, parsed):
        warnings.append(
            "the query reads as a name (authors hold its words more than titles and "
            "abstracts do): searched by keywords, as the model does not know people"
        )
        return "keyword", 1.0
    if engine.data.vectors.size == 0:
        if writing(engine.data.root) is not None:
            warnings.append("the semantic index is still being built; searched by keywords")
        else:
            warnings.append("no paper has a vector yet; searched by keywords")
        return "keyword", 1.0
    progress = engine.data.embedding_progress()  # cheap: counts kept per change
    if not progress.pending:
        return mode, 1.0
    state, running = embedding_state(engine.data.root)
    if mode == "hybrid" and progress.coverage < engine.config.search.semantic_min_coverage:
        warnings.append(
            f"{state}: {progress.line(running)}; searched by keywords until "
            f"{engine.config.search.semantic_min_coverage:.0%} of the papers have vectors"
        )
        return "keyword", 1.0
    side = "semantic search" if mode == "semantic" else "the semantic side (weighed by it)"
    warnings.append(f"{state}: {side} covers {progress.line(running)}")
    return mode, progress.coverage


def embedding_state(root: Path) -> tuple[str, bool]:
    """How a note names a pending backlog, and whether a process embeds it now (holds the
    writer lock): only then do its rate and time to go mean anything. Worded for whoever
    searches: what to run is the admin's (``doctor``, ``stats``, the admin page)."""
    running = writing(root) is not None
    return ("embedding is under way" if running else "not all papers are embedded yet"), running


def merged_researchers(engine: SearchEngine, f: Filters) -> tuple[Filters, list[str]]:
    """Researcher ids a merge took away read as the researcher they lead to now (as their
    pages redirect), each with a note; their papers are that researcher's."""
    moved = engine.data.people.survivors(f.researcher_ids) if f.researcher_ids else {}
    if not moved:
        return f, []
    ids = tuple(dict.fromkeys(moved.get(r, r) for r in f.researcher_ids))
    return replace(f, researcher_ids=ids), [
        f"researcher #{old} is now #{new}" for old, new in moved.items()
    ]


def canonical_filters(engine: SearchEngine, f: Filters) -> tuple[Filters, list[str]]:
    """Fix category case (``CS.cl`` -> ``cs.CL``); warn about unknown ones. A merged
    researcher id reads as its survivor (``merged_researchers``)."""
    f, notes = merged_researchers(engine, f)
    if not f.categories:
        return f, notes
    lookup = engine.category_lookup()
    cats, warnings = [], []
    for c in f.categories:
        canon = lookup.get(c.strip().lower())
        if canon is None:
            warnings.append(f"no papers in category '{c}'")
            canon = c.strip()
        cats.append(canon)
    return replace(f, categories=tuple(cats)), notes + warnings


def filter_query(engine: SearchEngine, f: Filters) -> tuple[tantivy.Query | None, list[str]]:
    """The filters as one query, researcher names read as ``au:`` reads them; and a warning
    for each name on no paper and each researcher number no one has (a filter that empties
    the answer says why)."""
    lex = engine.data.lexical
    filt = keyword_filter(lex, replace(f, researchers=()))
    known = engine.data.people.many(f.researcher_ids) if f.researcher_ids else {}
    unknown = [f"no researcher #{r} in this index" for r in f.researcher_ids if r not in known]
    if not f.researchers:
        return filt, unknown
    store = engine.data.store
    must, warnings = [], unknown
    for name in f.researchers:
        query = lex.parse(author_clause(store, name_key(name)))[0]
        if not lex.count(query):
            warnings.append(f"no papers by a researcher named '{name}'")
        must.append((tantivy.Occur.Must, query))
    if filt is not None:
        must.append((tantivy.Occur.Must, filt))
    return tantivy.Query.boolean_query(must), warnings


def graph_clause(engine: SearchEngine) -> GraphClause:
    """``cites:<id>`` (the papers here citing it) and ``citedby:<id>`` (the papers here it
    cites) as a filter on those docids, read from the citation graph (``engine.graph``)."""
    data = engine.data

    def clause(c: Clause) -> tuple[tantivy.Query, str | None]:
        parsed = parse_arxiv_id(c.text)
        docid = data.store.docid_of(parsed[0]) if parsed else None
        if docid is None:
            what = "no paper of that id in this index" if parsed else "not an arXiv id"
            return tantivy.Query.empty_query(), f"{c.field}:{c.text}: {what}; nothing matches it"
        ids = data.graph.citations(docid) if c.field == "cites" else data.graph.references(docid)
        if ids:
            return data.lexical.docids_for(ids), None
        if not data.graph.enriched:
            why = "no citation data yet (`papersift enrich` adds it)"
        else:
            why = "no paper here cites it" if c.field == "cites" else "it cites no paper here"
        return tantivy.Query.empty_query(), f"{c.field}:{c.text}: {why}; nothing matches it"

    return clause


def named_researchers(engine: SearchEngine, parsed: ParsedQuery) -> tuple[ResearcherRef, ...]:
    """The researchers the query names, when all of it reads as one person's name."""
    if not 2 <= len(parsed.clauses) <= 4 or not all(c.free for c in parsed.clauses):
        return ()
    name = " ".join(c.text for c in parsed.clauses)
    found = engine.people.many(compatible_researchers(engine.data.store, name))
    best = sorted(found.values(), key=lambda r: (-r.papers, r.rid))[:NAMED_RESEARCHERS]
    return tuple(ResearcherRef(r.rid, r.name, r.papers) for r in best if r.papers > 0)


def reads_as_name(lex: LexicalIndex, parsed: ParsedQuery) -> bool:
    """Whether every word of a query of one to four plain words is held by more papers'
    authors than titles and abstracts ("Lariviere", "V. Larivière"): the model does not
    know people, so the papers nearest in meaning to a name are noise."""
    clauses = parsed.clauses
    if not 1 <= len(clauses) <= 4 or not all(c.free and not c.phrase for c in clauses):
        return False
    for word in (w for c in clauses for w in c.parts()):
        held = lex.doc_freqs(word)
        if held["au"] <= held["ti"] + held["abs"]:
            return False
    return True


def _cut(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, ending at a word boundary."""
    cut = text[:limit]
    return cut.rsplit(None, 1)[0] if len(text) > limit and " " in cut else cut
