"""The JSON forms the engine's results take, declared once as msgspec Structs: the shapes the
CLI's ``--json`` prints, and what the JSON API shares with it (the statistics, also on the
admin page, and a hit's "why").

Field order is the order the JSON has; ``msgspec.json.encode`` writes them, and the OpenAPI
components come from the same types (``server.openapi``)."""

from __future__ import annotations

import math
from datetime import date
from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct

from papersift.engine import embed_progress, results
from papersift.engine.results import Mode, Sort

Count = Annotated[int, Meta(ge=0)]
DateTime = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]


def number(value: float, digits: int = 6) -> float | None:
    """A float rounded for JSON, or None where JSON has no number (NaN, infinities)."""
    return round(value, digits) if math.isfinite(value) else None


class FacetCount(Struct):
    value: str
    count: Count


class EmbeddingProgress(Struct):
    """How far the embedding backlog of one model has got."""

    model_id: str
    embedded: Count
    total: Count
    coverage: Annotated[float, Meta(ge=0, le=1)]
    rate: Annotated[float | None, Meta(description="papers/s last measured")]
    reached: Annotated[
        date | None,
        Meta(description="embedded newest first down to this date (null once papers were "
             "added since the last run)"),
    ]  # fmt: skip
    reached_month: str | None
    eta_seconds: Annotated[
        Annotated[int, Meta(ge=0)] | None,
        Meta(description="seconds the rest takes at the rate last measured, once a "
             "backlog run is under way"),
    ]  # fmt: skip
    measured_at: DateTime | None


class Stats(Struct):
    papers: Count
    embedded: Count
    coverage: float | None
    researchers_pending: Count
    embedding: EmbeddingProgress | None
    model_id: str
    dimension: Annotated[
        Count | None,
        Meta(description="of the vectors; null until one is stored or the model has run"),
    ]
    newest: date | None
    oldest: date | None
    categories: list[FacetCount]


class LocalStats(Stats):
    """``papersift stats --json``: the statistics and the data directory they describe."""

    data_dir: str


class FusedParts(Struct):
    """A hybrid hit's fused score as its two parts, which sum to it."""

    method: Annotated[
        Literal["convex", "rrf"],
        Meta(description="`convex`: weighted min-max normalised scores; `rrf`: reciprocal ranks."),
    ]
    keyword: float
    semantic: float


class Why(Struct):
    """Why the paper is a result, from what the search computed (`engine.why`)."""

    keyword_rank: Annotated[
        int | None,
        Meta(
            description="1-based rank among the keyword candidates by BM25; null when not one, "
            "or when keyword mode lists by date or citations."
        ),
    ]
    keyword_score: Annotated[
        float | None, Meta(description="BM25 score; null unless the keyword list was ranked by it.")
    ]
    semantic_rank: Annotated[int | None, Meta(description="1-based rank by cosine similarity.")]
    similarity: Annotated[
        float | None, Meta(description="Cosine similarity of the query's and the paper's vectors.")
    ]
    title_rule: Annotated[
        bool, Meta(description="Put first: its title holds the query as a phrase.")
    ]
    matched: Annotated[
        dict[str, list[str]],
        Meta(description="`title`, `abstract`, `authors`: the query words found in each."),
    ]
    filters: Annotated[
        list[str], Meta(description="The filters and restricting query clauses it passed.")
    ]
    fused: Annotated[
        FusedParts | None, Meta(description="Hybrid only: the fused score's two parts.")
    ]
    standout: Annotated[
        float | None,
        Meta(
            description="How many standard deviations `similarity` stands above the query's "
            "mean similarity to every paper: the semantic match rule's z-score "
            "(`[search] semantic_zscore`); null when the rule is off or the corpus too small."
        ),
    ] = None
    keyword_match: Annotated[
        bool | None,
        Meta(
            description="Whether the paper holds the query's words by the keyword rule; false: "
            "a hybrid result that matches by meaning only; null in semantic mode and when "
            "browsing without words."
        ),
    ] = None


class CliHit(Struct):
    id: str
    title: str
    authors: list[str]
    categories: list[str]
    published: date
    updated: date
    score: float | None
    ranks: dict[str, int]
    title_html: str
    snippet_html: str
    why: Why | None


class CliResearcher(Struct):
    id: int
    name: str
    papers: Count


class CliResult(Struct):
    """``papersift search --json``: one page of results."""

    query: str
    mode: Mode
    sort: Sort
    total: Count
    page: int
    page_size: int
    pages: int
    hits: list[CliHit]
    facets: dict[str, list[FacetCount]]
    # Researchers and institutions counted among the first this many results; None: all.
    facet_window: int | None
    warnings: list[str]
    suggestion: str | None  # did you mean: the query spelt as papers do
    corrected: str | None  # the suggestion, searched because the typed query matched nothing
    direct: str | None
    missing_id: str | None
    researchers: list[CliResearcher]
    took_ms: float | None


def facets(values: tuple[results.FacetCount, ...]) -> list[FacetCount]:
    return [FacetCount(f.value, f.count) for f in values]


def progress_body(p: embed_progress.EmbeddingProgress) -> EmbeddingProgress:
    eta = p.eta_seconds
    at = p.measured_at
    return EmbeddingProgress(
        model_id=p.model_id,
        embedded=p.embedded,
        total=p.total,
        coverage=round(p.coverage, 6),
        rate=None if p.rate is None else round(p.rate, 2),
        reached=p.reached,
        reached_month=None if p.reached is None else f"{p.reached:%Y-%m}",
        eta_seconds=None if eta is None else round(eta),
        measured_at=None if at is None else at.isoformat(timespec="seconds"),
    )


def stats_body(s: results.Stats) -> Stats:
    return Stats(
        papers=s.papers,
        embedded=s.embedded,
        coverage=number(s.coverage),
        researchers_pending=s.people_pending,
        embedding=progress_body(s.embedding) if s.embedding is not None else None,
        model_id=s.model_id,
        dimension=s.dimension,
        newest=s.newest,
        oldest=s.oldest,
        categories=facets(s.categories),
    )


def local_stats(s: results.Stats, data_dir: str) -> LocalStats:
    return LocalStats(**msgspec.structs.asdict(stats_body(s)), data_dir=data_dir)


def cli_hit(h: results.Hit) -> CliHit:
    p = h.paper
    return CliHit(
        id=p.arxiv_id,
        title=p.title,
        authors=[a.name for a in p.authors],
        categories=list(p.categories),
        published=p.published,
        updated=p.updated,
        score=number(h.score),
        ranks=dict(h.ranks),
        title_html=h.title_html,
        snippet_html=h.abstract_html,
        why=why_body(h.why) if h.why is not None else None,
    )


def why_body(w: results.Why) -> Why:
    f = w.fused
    return Why(
        w.keyword_rank,
        None if w.keyword_score is None else number(w.keyword_score),
        w.semantic_rank,
        None if w.similarity is None else number(w.similarity),
        w.title_rule,
        {name: list(words) for name, words in w.matched.items()},
        list(w.filters),
        FusedParts(f.method, number(f.keyword) or 0.0, number(f.semantic) or 0.0) if f else None,
        None if w.standout is None else number(w.standout),
        w.keyword_match,
    )  # fmt: skip


def cli_result(r: results.SearchResult) -> CliResult:
    return CliResult(
        query=r.request.query,
        mode=r.mode,
        sort=r.request.sort,
        total=r.total,
        page=r.page,
        page_size=r.page_size,
        pages=r.pages,
        hits=[cli_hit(h) for h in r.hits],
        facets={k: facets(v) for k, v in r.facets.items()},
        facet_window=r.facet_window,
        warnings=list(r.warnings),
        suggestion=r.suggestion,
        corrected=r.corrected,
        direct=r.direct.arxiv_id if r.direct else None,
        missing_id=r.missing_id,
        researchers=[CliResearcher(x.rid, x.name, x.papers) for x in r.researchers],
        took_ms=number(r.took_ms, 3),
    )
