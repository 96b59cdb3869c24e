"""What the site reads besides search: a paper by id, similar papers, category counts,
stats, sitemap rows, researchers' newest papers. :class:`SearchEngine` extends it, so the
server, feeds and CLI reach all of it through one typed object and never the store."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import date

from papersift.core.config import Config
from papersift.core.paper import Paper, parse_arxiv_id
from papersift.engine.datadir import DataDir
from papersift.engine.embed_progress import read_progress
from papersift.engine.graph import GraphCounts
from papersift.engine.hits import make_hits
from papersift.engine.institutions import Institutions
from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.neighbourhood import Neighbourhood, neighbourhood
from papersift.engine.people import People, papers_of_any
from papersift.engine.results import FacetCount, Filters, Hit, Stats


class Catalog:
    """Lookups over one data directory; safe to share across threads."""

    def __init__(self, data: DataDir) -> None:
        self.data = data
        self.config: Config = data.config
        self.people: People = data.people  # researchers, for pages and the API
        self.institutions = Institutions(data.store)  # the ROR registry, if imported
        self._cats_seq = -1
        self._cats: dict[str, int] = {}
        self._cat_names: dict[str, str] = {}
        self._embedded: tuple[tuple[int, int] | None, int] = (None, 0)
        self._newest: tuple[int, dict[str, date | None]] = (-1, {})  # newest_published's
        self._cats_lock = threading.Lock()

    def paper(self, arxiv_id: str) -> Paper | None:
        """A paper by arXiv id, with or without version suffix."""
        parsed = parse_arxiv_id(arxiv_id)
        if parsed is None:
            return None
        docid = self.data.store.docid_of(parsed[0])
        if docid is None:
            return None
        return self.data.store.get([docid]).get(docid)

    def similar(self, arxiv_id: str, limit: int = 10) -> list[Hit]:
        """Nearest papers to this one in the vector index (empty if it has no vector yet)."""
        parsed = parse_arxiv_id(arxiv_id)
        docid = self.data.store.docid_of(parsed[0]) if parsed else None
        if docid is None or self.data.store.count() == 0:
            return []
        vec = self.data.vectors.vector(docid)
        if vec is None:
            return []
        found = [(d, s) for d, s in self.data.vectors.search(vec, limit + 1) if d != docid]
        return make_hits(self.data, found[:limit], None, {"semantic": 1})

    def neighbourhood(self, arxiv_id: str) -> Neighbourhood | None:
        """The papers closest to this one by citations, or meaning when they are few
        (``engine.neighbourhood``); None for a paper this index does not hold."""
        parsed = parse_arxiv_id(arxiv_id)
        docid = self.data.store.docid_of(parsed[0]) if parsed else None
        return None if docid is None else neighbourhood(self.data, docid)

    def category_counts(self) -> dict[str, int]:
        """Papers per category, cached until the lexical index reloads."""
        with self._cats_lock:
            generation = self.data.lexical.generation
            if generation != self._cats_seq:
                self._cats = cats = self.data.lexical.category_counts()
                self._cat_names = category_names(cats)
                self._cats_seq = generation
            return self._cats

    def category_lookup(self) -> dict[str, str]:
        """Every category and archive the index holds, lowercased, to its case (built with
        the counts: per search it cost ~0.3 ms of a hybrid query's 1 ms plan at 663k)."""
        self.category_counts()
        with self._cats_lock:
            return self._cat_names

    def unknown_categories(self, categories: Iterable[str]) -> list[str]:
        """Those of ``categories`` (in any case; an archive such as ``cs`` counts) that no
        paper in the index has: a filter by one can only match nothing."""
        lookup = self.category_lookup()
        return [c for c in categories if c.strip().lower() not in lookup]

    def holds_institution(self, ror_id: str) -> bool:
        """Whether a paper in the index has this bare ROR id: a filter by one none has can
        only match nothing. A term dictionary lookup (microseconds; it may count a deleted
        paper until its segment merges, and then the filter matches nothing, as before)."""
        return self.data.lexical.searcher().doc_freq("inst", ror_id) > 0

    def stats(self) -> Stats:
        store = self.data.store
        emb = self.data.embedder
        cats = sorted(self.category_counts().items(), key=lambda kv: (-kv[1], kv[0]))
        # From the index's fast fields: the store's MIN/MAX scan took 0.35 s at 663k papers.
        oldest, newest = self.data.lexical.date_range()
        return Stats(
            papers=store.count(),
            embedded=self._embedded_count(),
            model_id=emb.model_id,
            # Known once a vector is stored or the model has run: asking the model would
            # load it (~1 s, and a first one builds its graph), which stats never does.
            dimension=emb.known_dim,
            categories=tuple(FacetCount(c, n) for c, n in cats),
            newest=newest,
            oldest=oldest,
            people_pending=self.data.people_pending(),
        )

    def _embedded_count(self) -> int:
        """Papers with a vector of their current text, recounted only after a change: the
        count joins every paper (0.4 s at 663k papers, 6 s under load) and holds the
        store's lock meanwhile, which stalled every search on a busy server."""
        key = (self.data.store.seq, self.data.vectors_generation)
        with self._cats_lock:
            if self._embedded[0] == key:
                return self._embedded[1]
        count = self.data.store.embedded_count(self.data.embedder.model_id)
        with self._cats_lock:
            self._embedded = (key, count)
        return count

    def stats_with_progress(self) -> Stats:
        """``stats()`` plus the embedding backlog's progress for the configured model (how
        far back it has embedded, the measured rate, the ETA). Loads no model: both only
        hash the model files and read counts from the store."""
        stats = self.stats()
        data = self.data
        model = data.indexing_embedder.model_id
        if model == stats.model_id:  # counted already: no second pass over the store
            progress = read_progress(data.store, model, stats.embedded, stats.papers)
        else:  # queries still use the previous model's vectors: show the new one's progress
            progress = data.embedding_progress(model)
        return replace(stats, embedding=progress)

    # -- listings ------------------------------------------------------------------------

    def store_version(self) -> tuple[str, int]:
        """Changes whenever a paper is added or changed (the sitemap's cache key)."""
        return (str(self.data.store.path), self.data.store.seq)

    def sitemap_chunks(self, size: int) -> list[tuple[int, date]]:
        """(chunk, newest update) of each non-empty docid range ``[k*size+1, (k+1)*size]``."""
        return self.data.store.sitemap_chunks(size)

    def sitemap_rows(self, first: int, last: int) -> Iterator[tuple[str, str, date]]:
        """(arxiv_id, title, updated) of docids ``first..last``, streamed in docid order."""
        return self.data.store.iter_sitemap_rows(first, last)

    def newest_published(self, categories: Sequence[str]) -> dict[str, date | None]:
        """The first-version date of the newest paper of each category or archive (None:
        it has none), as a search sorted newest would put first; kept until the keyword
        index reloads. One top-1 pass each, with none of a search's facets and cards: the
        sitemap's 176 category searches took 10-15 s at 663k papers the first time."""
        lex = self.data.lexical
        generation = lex.generation
        with self._cats_lock:
            known = self._newest if self._newest[0] == generation else (generation, {})
        wanted = [c for c in dict.fromkeys(categories) if c not in known[1]]
        firsts: dict[str, int | None] = {}
        for cat in wanted:
            query = keyword_filter(lex, Filters(categories=(cat,)))
            docids = lex.top(query, 1, 0, "newest")[0] if query is not None else []
            firsts[cat] = docids[0] if docids else None
        papers = self.data.store.get([d for d in firsts.values() if d is not None])
        found = dict(known[1])
        for cat, d in firsts.items():
            found[cat] = papers[d].published if d is not None and d in papers else None
        with self._cats_lock:
            self._newest = (generation, found)
        return {c: found[c] for c in categories}

    def hits_of(self, arxiv_ids: Sequence[str]) -> list[Hit]:
        """These papers (those still in the index), in this order, as result cards."""
        store = self.data.store
        ranked = [(d, 0.0) for a in arxiv_ids if (d := store.docid_of(a)) is not None]
        return make_hits(self.data, ranked, None, {})

    def newest_papers_of(self, rids: Sequence[int], limit: int) -> tuple[list[Paper], int]:
        """The newest ``limit`` papers any of these researchers wrote, and how many there are."""
        lex = self.data.lexical
        query = lex.docids_for(papers_of_any(self.data.store, rids))
        docids, _, total = lex.search(query, limit, 0, "newest")
        papers = self.data.store.get(docids)
        return [papers[d] for d in docids if d in papers], total

    def paper_graph(self, arxiv_id: str) -> GraphCounts | None:
        """Reference and citation counts of a paper (``engine.graph``); None if absent."""
        parsed = parse_arxiv_id(arxiv_id)
        docid = self.data.store.docid_of(parsed[0]) if parsed else None
        return None if docid is None else self.data.graph.counts(docid)


def category_names(categories: Iterable[str]) -> dict[str, str]:
    """Each category and its archive (``cs`` of ``cs.IR``), lowercased, to its spelling:
    how a typed category is matched to the index's."""
    cats = list(categories)
    names = {c.lower(): c for c in cats}
    names.update({c.split(".")[0].lower(): c.split(".")[0] for c in cats})
    return names
