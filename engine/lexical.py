"""The Tantivy BM25 index: writing, filters, sorted search, facets and snippets (its schema
and analysers: ``engine.lexical_schema``).

Text is not stored here: the paper store holds it, and hits are mapped back to papers by the
``docid`` fast field.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import tantivy
from cachetools import LRUCache

from papersift.core.errors import DataDirError
from papersift.core.paper import Paper
from papersift.engine.lexical_document import paper_document
from papersift.engine.lexical_schema import (
    ANALYZERS,
    DEFAULT_FIELDS,
    FACET_FIELDS,
    FACETS,
    TEXT_FIELDS,
    build_schema,
    facet_value,
    int_date,
)
from papersift.engine.results import FacetCount, Sort

WRITER_HEAP = 128_000_000
ALLOWED_CACHE_IDS = 4_000_000  # docids kept across cached filter sets (32 MB)


# How a damaged or missing keyword index is repaired (``papersift doctor`` says it too).
REBUILD = "stop the server, then run `papersift doctor --fix` (rebuilds it from the store)"


class LexicalIndex:
    """One on-disk Tantivy index; searches are thread-safe, writes go through one writer."""

    def __init__(self, path: Path, *, title_boost: float = 1.0, author_boost: float = 1.0) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.schema = build_schema()
        try:
            self.index = tantivy.Index(self.schema, path=str(path), reuse=True)
        except ValueError as exc:  # Tantivy's "Data corrupted: ...", e.g. a damaged meta.json
            raise DataDirError(
                f"the keyword index {path} cannot be opened ({exc}); {REBUILD}"
            ) from None
        for tokenizer, analyzer in ANALYZERS.items():
            self.index.register_tokenizer(tokenizer, analyzer())
        self.boosts = {"ti": title_boost, "abs": 1.0, "au": author_boost}
        self._analyzers = {f: ANALYZERS[t]() for f, t in TEXT_FIELDS.items()}
        self._writer: tantivy.IndexWriter | None = None
        self._wlock = threading.Lock()
        # Filter -> allowed docids, valid while the searcher generation is unchanged.
        self._generation = 0
        self._allowed: LRUCache[tuple[int, str], npt.NDArray[np.int64]] = LRUCache(
            ALLOWED_CACHE_IDS, getsizeof=len
        )
        self._allowed_lock = threading.Lock()
        self._empty: tuple[int, frozenset[str]] = (-1, frozenset())  # (generation, fields)
        self._cited: tuple[int, bool] = (-1, False)  # (generation, any citation count)
        # researcher ids -> docids of their joint papers (set by DataDir from engine.people).
        self.researcher_docids: Callable[[Sequence[int]], list[int]] | None = None

    # -- writing -------------------------------------------------------------------------

    def _get_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self._writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)
        return self._writer

    def upsert(self, items: Sequence[tuple[int, Paper]]) -> None:
        """Replace the documents of these docids (delete then add); visible after commit."""
        with self._wlock:
            w = self._get_writer()
            for docid, paper in items:
                w.delete_documents_by_term("docid", docid)
                w.add_document(paper_document(docid, paper))

    def delete(self, docids: Sequence[int]) -> None:
        with self._wlock:
            w = self._get_writer()
            for docid in docids:
                w.delete_documents_by_term("docid", docid)

    def commit(self) -> None:
        with self._wlock:
            if self._writer is not None:
                self._writer.commit()
        self.reload()

    def close_writer(self) -> None:
        """Commit, let merges finish and release the single-writer lock."""
        with self._wlock:
            self._close_writer()
        self.reload()

    def _close_writer(self) -> None:
        if self._writer is not None:
            self._writer.commit()
            self._writer.wait_merging_threads()
            self._writer = None

    def replace_all(self, chunks: Iterable[Sequence[tuple[int, Paper]]], heap: int) -> int:
        """Replace every document with those of ``chunks`` in one commit, by a writer of
        ``heap`` bytes (one segment while they fit: ``engine.lexical_rewrite``); returns
        how many. If iterating ``chunks`` raises, nothing changes."""
        written = 0
        with self._wlock:
            self._close_writer()
            writer = self.index.writer(heap_size=heap, num_threads=1)
            try:
                writer.delete_all_documents()
                for chunk in chunks:
                    for docid, paper in chunk:
                        writer.add_document(paper_document(docid, paper))
                    written += len(chunk)
                writer.commit()
            except BaseException:
                writer.rollback()
                raise
            finally:
                writer.wait_merging_threads()  # releases Tantivy's lock
        self.reload()
        return written

    # -- queries -------------------------------------------------------------------------

    def reload(self) -> None:
        self.index.reload()
        with self._allowed_lock:
            self._generation += 1
            self._allowed.clear()

    @property
    def generation(self) -> int:
        """Changes whenever the searcher may see different documents."""
        return self._generation

    def category_counts(self) -> dict[str, int]:
        """Papers per category over the whole index (a fast-field aggregation: ~60x
        quicker than scanning the store's rows at 663k papers)."""
        agg = {"c": {"terms": {"field": "cat", "size": 100_000}}}
        raw = self.index.searcher().aggregate(tantivy.Query.all_query(), agg)
        return {str(b["key"]): int(b["doc_count"]) for b in raw["c"]["buckets"]}

    def date_range(self) -> tuple[date | None, date | None]:
        """Oldest and newest first-version dates in the index (fast-field min and max)."""
        agg = {"lo": {"min": {"field": "published"}}, "hi": {"max": {"field": "published"}}}
        raw = self.index.searcher().aggregate(tantivy.Query.all_query(), agg)
        return int_date(raw["lo"].get("value")), int_date(raw["hi"].get("value"))

    def allowed(self, filt: tantivy.Query) -> npt.NDArray[np.int64]:
        """Sorted docids matching ``filt``, cached per searcher generation.

        Filters repeat (a category picked from the facets, a researcher's page), and
        listing a broad one costs tens of milliseconds, so sets are kept, like
        Elasticsearch's filter cache, within ``ALLOWED_CACHE_IDS`` docids in all.
        """
        key = (self._generation, repr(filt))
        with self._allowed_lock:
            hit = self._allowed.get(key)  # a read makes it the most recently used
        if hit is not None:
            return hit
        docids, _, _ = self.search(filt, max(1, self.count(filt)))
        found = np.sort(np.asarray(docids, np.int64))
        found.flags.writeable = False
        with self._allowed_lock:
            if key[0] == self._generation and len(found) <= self._allowed.maxsize:
                self._allowed[key] = found  # the least recently used go to make room
        return found

    @property
    def num_docs(self) -> int:
        return int(self.index.searcher().num_docs)

    def parse(self, text: str) -> tuple[tantivy.Query, list[str]]:
        """Parse a query string leniently; returns the query and what was ignored."""
        query, errors = self.index.parse_query_lenient(
            text, DEFAULT_FIELDS, field_boosts=self.boosts
        )
        return query, [str(e) for e in errors]

    def word_terms(self, words: Sequence[str]) -> list[tantivy.Query] | None:
        """The term queries ``parse`` builds for each of ``words`` quoted (``"w"``) in the
        default fields, boosted alike, in one list; None if a word is several tokens in a
        field (the parser makes a phrase of it). A disjunction of these scores as the
        parser's nested one (each match adds its terms' BM25) but is flat, without a union
        scorer per word: 40% less CPU for hybrid's top 1,000 any-word candidates at 663k
        papers (bench/RESULTS.md). Tantivy would also prune a flat union by block-max
        WAND, but tantivy-py collects every search through a MultiCollector, which visits
        every match (bench/ranking_pass.py). A word spelled as an earlier one counts once, as
        the parser drops it ("end-to-end" is ``"end" "to" "end"``)."""
        terms: list[tantivy.Query] = []
        for word in dict.fromkeys(words):
            for name, tokens in self._field_tokens(word):
                if len(tokens) > 1:
                    return None
                if tokens:
                    term = tantivy.Query.term_query(self.schema, name, tokens[0])
                    boost = self.boosts[name]
                    terms.append(term if boost == 1.0 else tantivy.Query.boost_query(term, boost))
        return terms

    def postings(self, words: Sequence[str]) -> int:
        """About how many postings Tantivy walks for a clause of ``words`` in the default
        fields: the smallest word's document frequency summed over the fields (the term
        dictionaries' counts; a word of several tokens counts its rarest)."""
        return min((sum(self.doc_freqs(word).values()) for word in words), default=0)

    def doc_freqs(self, word: str) -> dict[str, int]:
        """How many papers hold ``word`` in each default field (a word of several tokens:
        its rarest token's count; a field where it is no token: 0)."""
        searcher = self.index.searcher()
        return {
            name: min((searcher.doc_freq(name, t) for t in tokens), default=0)
            for name, tokens in self._field_tokens(word)
        }

    def share(self, word: str) -> float:
        """At least which share of papers hold ``word``: the largest of its counts in the
        default fields over all papers."""
        n = self.num_docs
        return max(self.doc_freqs(word).values(), default=0) / n if n else 0.0

    def analyzer(self, name: str) -> tantivy.TextAnalyzer:
        """The analyser of text field ``name``, as the index reads its text."""
        return self._analyzers[name]

    def _field_tokens(self, word: str) -> list[tuple[str, list[str]]]:
        """(field, tokens) of ``word`` as each default field analyses it."""
        return [(name, self._analyzers[name].analyze(word)) for name in DEFAULT_FIELDS]

    @staticmethod
    def combine(query: tantivy.Query | None, filt: tantivy.Query | None) -> tantivy.Query:
        """``query`` restricted by ``filt`` (filters do not change scores)."""
        if query is None and filt is None:
            return tantivy.Query.all_query()
        if filt is None:
            assert query is not None
            return query
        if query is None:
            return filt
        return tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, query),
                (tantivy.Occur.Must, tantivy.Query.const_score_query(filt, 0.0)),
            ]
        )

    def docids_for(self, ids: Sequence[int]) -> tantivy.Query:
        """Matches exactly these docids (as text terms: 2.5 ms for 1,000 at 663k papers,
        10.7 ms as integer terms)."""
        return tantivy.Query.term_set_query(self.schema, "key", [str(d) for d in ids])

    def count(self, query: tantivy.Query) -> int:
        result = self.index.searcher().search(query, 1, count=True)
        return int(result.count)  # type: ignore[attr-defined]  # the stub omits .count

    def search(
        self, query: tantivy.Query, limit: int, offset: int = 0, sort: Sort = "relevance"
    ) -> tuple[list[int], list[float], int]:
        """Docids and scores of one page of matches, and the total number of matches."""
        if limit <= 0:  # Tantivy's top-k collector panics on a zero limit
            return [], [], self.count(query)
        return self._search(query, limit, offset, sort, True)

    def top(
        self, query: tantivy.Query, limit: int, offset: int = 0, sort: Sort = "relevance"
    ) -> tuple[list[int], list[float]]:
        """Docids and scores of one page of matches, without counting them all: the count
        rides on the top-k pass as a second collector, ~1.6 ms of a 10 ms keyword-side
        search at 663k papers (bench/RESULTS.md), and a caller that counts the year facet
        anyway has the total from it."""
        if limit <= 0:
            return [], []
        docids, scores, _ = self._search(query, limit, offset, sort, False)
        return docids, scores

    def _search(
        self, query: tantivy.Query, limit: int, offset: int, sort: Sort, count: bool
    ) -> tuple[list[int], list[float], int]:
        searcher = self.index.searcher()
        kwargs: dict[str, Any] = {}
        if sort in ("newest", "oldest"):
            kwargs["order_by_field"] = "published"
            kwargs["order"] = tantivy.Order.Desc if sort == "newest" else tantivy.Order.Asc
        elif sort == "cited":
            kwargs["order_by_field"] = "cited"
        result = searcher.search(query, limit, count=count, offset=offset, **kwargs)
        # ``hits`` builds a new list of (score, address) on every access (0.2 ms for 2,000),
        # so it is read once and unzipped in C; the fast field values are ints already.
        hits = result.hits
        total = int(result.count) if count else -1  # type: ignore[attr-defined]
        if not hits:
            return [], [], total
        scores, addrs = zip(*hits, strict=True)
        docids = cast(list[int], searcher.fast_field_values("docid", list(addrs)))
        return docids, list(scores), total

    def facets(
        self, query: tantivy.Query, size: int = 30, kinds: Sequence[str] = FACETS
    ) -> dict[str, tuple[FacetCount, ...]]:
        """Counts of the matches of ``query`` per facet kind (top ``size`` values; years all)."""
        empty = self._empty_fields()
        out: dict[str, tuple[FacetCount, ...]] = {k: () for k in kinds if FACET_FIELDS[k] in empty}
        kinds = [k for k in kinds if k not in out]
        if not kinds:
            return out
        agg = {k: {"terms": {"field": FACET_FIELDS[k], "size": 200 if k == "years" else size}}
               for k in kinds}  # fmt: skip
        raw = self.index.searcher().aggregate(query, agg)
        for kind in kinds:
            counts = [
                FacetCount(facet_value(b["key"]), int(b["doc_count"])) for b in raw[kind]["buckets"]
            ]
            if kind == "years":
                counts.sort(key=lambda f: f.value, reverse=True)
            out[kind] = tuple(counts)
        return out

    def has_terms(self, kind: str) -> bool:
        """Whether any paper has a value of facet ``kind`` (institutions: none before any
        enrichment), per searcher generation."""
        return FACET_FIELDS[kind] not in self._empty_fields()

    def has_citations(self) -> bool:
        """Whether any paper has a citation count (the ``cited`` sort means something),
        per searcher generation."""
        generation = self._generation
        if self._cited[0] != generation:
            cited = tantivy.Query.range_query(
                self.schema, "cited", tantivy.FieldType.Integer, 1, 2**62
            )
            self._cited = (generation, self.count(cited) > 0)
        return self._cited[1]

    def _empty_fields(self) -> frozenset[str]:
        """Text facet fields without a single term (institutions before any enrichment),
        per searcher generation: counting one still looked up every paper, 1.5 ms for 200
        papers at 663k."""
        generation = self._generation
        if self._empty[0] != generation:
            searcher = self.index.searcher()
            empty = frozenset(
                f for f in ("cat", "inst") if not searcher.terms_with_prefix(f, "", limit=1)
            )
            self._empty = (generation, empty)
        return self._empty[1]

    def searcher(self) -> tantivy.Searcher:
        """The index as of its last reload."""
        return self.index.searcher()

    def snippet_generators(
        self, query: tantivy.Query, searcher: tantivy.Searcher | None = None
    ) -> tuple[tantivy.SnippetGenerator, tantivy.SnippetGenerator]:
        """The title's and the abstract's snippet generator for ``query``, weighing its
        terms by ``searcher``'s document frequencies (the current one if None)."""
        searcher = searcher or self.index.searcher()
        ti = tantivy.SnippetGenerator.create(searcher, query, self.schema, "ti")
        ti.set_max_num_chars(1000)
        ab = tantivy.SnippetGenerator.create(searcher, query, self.schema, "abs")
        ab.set_max_num_chars(300)
        return ti, ab
