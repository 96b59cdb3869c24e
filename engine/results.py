"""The search request and the one result type every front end (CLI, web, API, feeds) reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from papersift.core.config_search import SearchConfig
from papersift.core.errors import QueryError, WindowError
from papersift.core.paper import Paper
from papersift.engine.embed_progress import EmbeddingProgress

Mode = Literal["keyword", "semantic", "hybrid"]
Sort = Literal["relevance", "newest", "oldest", "cited"]
MODES: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")
SORTS: tuple[Sort, ...] = ("relevance", "newest", "oldest", "cited")


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions applied to both retrievers; empty means no restriction."""

    categories: tuple[str, ...] = ()  # any of these; a top-level archive (`cs`) matches `cs.*`
    researchers: tuple[str, ...] = ()  # author names; a paper must have all of them
    date_from: date | None = None  # published on or after
    date_to: date | None = None  # published on or before
    researcher_ids: tuple[int, ...] = ()  # researcher ids (engine.people); all of them
    institutions: tuple[str, ...] = ()  # bare ROR ids of authors' institutions; all of them

    @property
    def empty(self) -> bool:
        return not (
            self.categories
            or self.researchers
            or self.date_from
            or self.date_to
            or self.researcher_ids
            or self.institutions
        )


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str = ""
    mode: Mode | None = None  # None: the configured default
    filters: Filters = field(default_factory=Filters)
    sort: Sort = "relevance"
    page: int = 1  # 1-based
    page_size: int | None = None  # None: the configured default
    # When the query as typed matches nothing and its "did you mean" does, answer that.
    autocorrect: bool = True

    def checked_size(self, cfg: SearchConfig) -> int:
        """The page size this request asks for under ``cfg``, once its page, window and
        text are within the limits; else a ``QueryError`` saying which one."""
        size = self.page_size or cfg.page_size
        if not 1 <= size <= cfg.max_page_size:
            raise QueryError(f"page size must be between 1 and {cfg.max_page_size}")
        if self.page < 1:
            raise QueryError("page must be 1 or more")
        if self.page * size > cfg.max_window:
            raise WindowError(past_window(self.page, size, cfg.max_window))
        if len(self.query) > cfg.max_text_length:
            raise QueryError(f"the text is longer than {cfg.max_text_length:,} characters")
        return size


def window_pages(max_window: int, size: int) -> int:
    """How many pages of ``size`` a request can reach: none may pass the first
    ``max_window`` results (offset + page size); never fewer than one."""
    return max(1, max_window // size)


def past_window(page: int, size: int, max_window: int) -> str:
    """Why ``page`` cannot be answered: it is past the result window. It counts the results
    the window's pages reach (984 of a 1,000 window at 24 per page), as the pages say."""
    last = window_pages(max_window, size)
    pages = "page" if last == 1 else "pages"
    return (
        f"page {page:,} is past the result window: with {size} per page at most {last:,} "
        f"{pages} can be reached (the first {min(last * size, max_window):,} results)"
    )


@dataclass(frozen=True, slots=True)
class Fused:
    """A hybrid hit's fused score, as its two parts (they sum to the score)."""

    method: Literal["convex", "rrf"]  # min-max normalised scores, or reciprocal ranks
    keyword: float
    semantic: float


@dataclass(frozen=True, slots=True)
class Why:
    """Why a hit is in the results (``engine.why``)."""

    keyword_rank: int | None  # 1-based, in the keyword list; None: not a keyword candidate
    keyword_score: float | None  # BM25; None when the list was not ranked by it
    semantic_rank: int | None
    similarity: float | None  # cosine between the query's and the paper's vectors
    title_rule: bool  # put first because its title holds the query as a phrase
    matched: dict[str, tuple[str, ...]]  # field -> the query words found in it
    filters: tuple[str, ...]  # every filter the paper passed (all of the request's)
    fused: Fused | None = None
    # How many standard deviations ``similarity`` is above the query's mean similarity to
    # every paper (the semantic rule's z-score, ``engine.background``); None: not known.
    standout: float | None = None
    # Whether the paper holds the query's words by the keyword rule (a keyword match; else
    # it matches by meaning only); None: not asked (semantic mode, browsing).
    keyword_match: bool | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    paper: Paper
    score: float
    title_html: str  # HTML-escaped title with query terms in <b>
    abstract_html: str  # HTML-escaped snippet of the abstract with query terms in <b>
    ranks: dict[str, int]  # 1-based rank in each retriever that found it, for debugging
    why: Why | None = None  # a search's hits say why they are there (``engine.why``)


@dataclass(frozen=True, slots=True)
class FacetCount:
    value: str
    count: int


@dataclass(frozen=True, slots=True)
class ResearcherRef:
    """A researcher named by the query (the card above the results)."""

    rid: int
    name: str
    papers: int


@dataclass(frozen=True, slots=True)
class SearchResult:
    request: SearchRequest
    mode: Mode  # the mode actually used
    hits: tuple[Hit, ...]
    total: int  # papers that match the query (the match set, ``engine.match``)
    page: int
    page_size: int
    facets: dict[str, tuple[FacetCount, ...]]  # over the match set; "researchers" are ids
    warnings: tuple[str, ...] = ()  # what the lenient parser ignored, fallbacks taken
    direct: Paper | None = None  # the query was an arXiv id or URL of this paper
    took_ms: float = 0.0
    reachable: int | None = None  # results paging can reach (the window); None: total
    missing_id: str | None = None  # the query was an arXiv id this index does not hold
    researchers: tuple[ResearcherRef, ...] = ()  # researchers whose name the query is
    # The query with each word no paper holds, or few do and it looks a typo, spelt as
    # papers most likely meant (``engine.spelling``): "Did you mean"; None when none is.
    suggestion: str | None = None
    # Whether a query that matches nothing is searched as the suggestion instead: each
    # word it replaces is held by no paper, or by far fewer than its replacement.
    suggestion_sure: bool = False
    # The query searched instead, the suggestion, when the query as typed matched nothing
    # ("Showing results for"); None when the results are the typed query's own.
    corrected: str | None = None
    # The researchers and institutions facets count the first this many results (in
    # semantic and hybrid mode the most relevant) when there are more; None: all of them.
    facet_window: int | None = None

    @property
    def pages(self) -> int:
        """Pages a request can ask for: the last one holds the last reachable result."""
        reach = self.total if self.reachable is None else min(self.total, self.reachable)
        return max(1, -(-reach // self.page_size))


@dataclass(frozen=True, slots=True)
class Stats:
    papers: int
    embedded: int  # papers with a vector of the configured model
    model_id: str
    dimension: int | None  # None until a vector is stored or the model has been loaded
    categories: tuple[FacetCount, ...]
    newest: date | None
    oldest: date | None
    people_pending: int = 0  # papers whose researcher identities the backlog has not done
    # Reach, rate and ETA of the embedding backlog (DataDir.embedding_progress); the
    # configured model's while queries still use the vectors of the one before it.
    embedding: EmbeddingProgress | None = None

    @property
    def coverage(self) -> float:
        return self.embedded / self.papers if self.papers else 1.0
