"""The JSON API's responses for search, papers, categories, stats and errors, declared once
as msgspec Structs: the routes build and encode these, and the OpenAPI document's components
are generated from them (``server.openapi``), so the two cannot drift.

Field order is the JSON's order. Every field is required (always present, ``null`` when
unknown) unless it has a default and its Struct omits defaults."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from msgspec import Meta, Struct, field

from papersift.engine.results import Mode, Sort
from papersift.engine.serialize import Count, FacetCount, Why

Uri = Annotated[str, Meta(extra_json_schema={"format": "uri"})]
NULL_URL = Annotated[str | None, Meta(description="URL of the next page, if any.")]


# An error's code by its status (``server.errors``); any other status is "error".
ERROR_CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 409: "conflict", 413: "too_large", 429: "too_many_requests",
    431: "head_too_large", 500: "internal_error", 503: "unavailable",
}  # fmt: skip


class ErrorDetail(Struct, omit_defaults=True):
    status: int
    code: Annotated[
        str,
        Meta(
            description="Named after the status: " + ", ".join(ERROR_CODES.values()) + ".",
            examples=["bad_request", "not_found"],
        ),
    ]
    message: str
    parameter: str | None = None  # left out unless a parameter is to blame


class Error(Struct):
    """Every error the API answers: the status, a code, and what to change."""

    error: ErrorDetail


class Author(Struct):
    name: str
    ids: dict[str, str]


class Paper(Struct):
    id: Annotated[str, Meta(examples=["2401.10241", "cmp-lg/9405001"])]
    version: Annotated[int, Meta(ge=1)]
    title: Annotated[
        str,
        Meta(
            description="As arXiv gives it, TeX and all (`\\'Etude`, `$\\alpha$`): the paper "
            "page renders it (KaTeX for math); a plain-text form for every hit cost ~0.5 ms "
            "of each search (pylatexenc), so clients render it as they need."
        ),
    ]
    abstract: str
    authors: list[Author]
    categories: list[str]
    published: date
    updated: date
    doi: str | None
    journal_ref: str | None
    comments: str | None
    license: str | None
    citation_count: int | None
    primary_category: str
    url: Uri
    abs_url: Uri
    pdf_url: Uri


class Hit(Struct):
    paper: Paper
    score: float | None
    title_html: Annotated[
        str,
        Meta(description="Escaped title, query terms in <b> (a TeX formula holding one whole)."),
    ]
    snippet_html: Annotated[
        str,
        Meta(
            description="Escaped abstract excerpt, terms in <b> (a TeX formula holding one "
            "whole); no formula is cut at its edges."
        ),
    ]
    ranks: Annotated[
        dict[str, int],
        Meta(
            description="1-based rank in each retriever that found the paper (`keyword`, "
            "`semantic`); `title` when its title holds the query as a phrase and it was put "
            "first, a whole title first of all (see [search] title_phrase_max)."
        ),
    ]
    why: Annotated[
        Why | None, Meta(description="Why it is a result; null outside a search (e.g. similar).")
    ]


class SearchEcho(Struct):
    """The request as the server understood it."""

    q: str
    mode: Mode | None
    sort: Sort
    page: int
    page_size: int
    category: list[str]
    researcher: list[str]
    researcher_id: list[int]
    institution: Annotated[list[str], Meta(description="Bare ROR ids.")]
    date_from: date | None = field(name="from")
    date_to: date | None = field(name="to")
    autocorrect: Annotated[
        bool, Meta(description="False when asked to search the query as typed (`autocorrect=0`).")
    ]


class ResearcherMatch(Struct):
    """A researcher whose name the query is."""

    id: Count
    name: str
    papers: Count
    url: Uri


class NamedFacetCount(Struct):
    """A facet value that is an id, with the name it stands for (as the search page shows it)."""

    value: Annotated[str, Meta(description="The id: what the facet's filter takes.")]
    count: Count
    name: Annotated[
        str | None, Meta(description="Its name; null for an id this index no longer knows.")
    ]


# Facet values that are ids, by facet: value -> name (``server.api.facet_names``).
FacetNames = dict[str, dict[str, str]]


class SearchFacets(Struct):
    """Counts over the results, not only this page's, most first: categories and years over
    all of them, researchers and institutions over the first `counted_among_first` when that
    is not null. A facet that was not counted (e.g. researchers of a search by pasted text)
    is empty."""

    categories: list[FacetCount]
    years: list[FacetCount]
    researchers: Annotated[
        list[NamedFacetCount],
        Meta(
            description="`value`: a researcher id (the `researcher_id` filter); `name`: theirs. "
            "Counted among the first `counted_among_first` results when that is not null: the "
            "filter may then find more papers than `count`."
        ),
    ]
    institutions: Annotated[
        list[NamedFacetCount],
        Meta(
            description="`value`: a bare ROR id (the `institution` filter); `name`: its name. "
            "Counted among the first `counted_among_first` results, as `researchers` are."
        ),
    ]
    counted_among_first: Annotated[
        Annotated[int, Meta(ge=1)] | None,
        Meta(
            description="When there are more results than this, `researchers` and "
            "`institutions` count those of the first this many (in semantic and hybrid mode "
            "the most relevant, whatever the sort), so a count may be below the filter's "
            "total; null: they count all the results, as `categories` and `years` do.",
        ),
    ]


class LooserSearch(Struct):
    label: Annotated[
        str,
        Meta(
            description='What it changes: "Search for “dark” only", "Search by meaning '
            '(semantic mode)", "Search again without any filter".'
        ),
    ]
    url: Uri  # the search, in this API
    total: Count


class SearchResponse(Struct):
    request: SearchEcho
    mode: Annotated[Mode, Meta(description="The mode actually used.")]
    total: Annotated[
        int,
        Meta(
            ge=0,
            description="Papers that match the query (keyword matches by minimum-should-match, "
            "semantic ones above the similarity floor; in hybrid mode both; for a query that "
            "lists papers by id, those of them this index holds).",
        ),
    ]
    page: int
    page_size: int
    pages: Annotated[
        int,
        Meta(
            ge=1,
            description="Pages that can be asked for: the last holds the last result within "
            "the result window.",
        ),
    ]
    reachable: Annotated[
        int,
        Meta(
            ge=0,
            description="Results the pages reach: `total`, or fewer when the result window "
            "(`[search] max_window`) ends the pages first. Narrower filters (`from`, `to`, "
            "`category`) or the other date order (`sort`) reach the rest; the last page's "
            "`warnings` say how.",
        ),
    ]
    took_ms: float | None
    warnings: Annotated[
        list[str],
        Meta(
            description="What the lenient query parser ignored, fallbacks taken, a page "
            "asked for past the last one (its hits are empty), on the last page of a list the "
            "result window cuts short how to reach the rest, and, for a hybrid list sorted "
            "by date or citations, how many of its papers match by meaning only when they "
            "are most of it, and how many looser matches by meaning relevance order adds "
            "(`[search] semantic_zscore_sorted`); for a query that lists papers by id, the "
            "ids this index does not hold; for an empty answer, a required clause that "
            "matches no paper by itself, and a date filter no paper of the index falls in "
            "(with the years the index lacks around it, or the span its papers cover)."
        ),
    ]
    suggestion: Annotated[
        str | None,
        Meta(
            description="Did you mean: the query as typed with each word no paper holds, "
            "or few papers hold and far more hold a word it looks a typo of, replaced by "
            "the word papers hold that it most likely misspells (the fewest edits, then the "
            "most papers); null when no word is likely a typo or none is near."
        ),
    ]
    corrected: Annotated[
        str | None,
        Meta(
            description="The query these results answer instead of the query as typed: "
            "no paper matched that, its `suggestion` matches some and is sure (each word it "
            "replaces is held by no paper or by far fewer than its replacement; showing "
            "results for; "
            "`autocorrect=0` searches it as typed). Null when the results are the typed "
            "query's own."
        ),
    ]
    direct: Annotated[
        Paper | None, Meta(description="The paper, when the query was its arXiv id or URL.")
    ]
    missing_id: Annotated[
        str | None,
        Meta(description="The arXiv id the query named, when this index does not hold it."),
    ]
    researchers: Annotated[
        list[ResearcherMatch],
        Meta(description="Researchers whose name the query is (shown above the results)."),
    ]
    facets: SearchFacets
    hits: list[Hit]
    next: NULL_URL
    looser: Annotated[
        list[LooserSearch],
        Meta(
            description="For an empty answer: the searches a step looser than this one "
            "(without its filters, by meaning, with one word left out) that find papers, "
            "with how many, as the search page offers them; [] otherwise."
        ),
    ] = []


class PaperGraph(Struct, forbid_unknown_fields=True):
    """A paper's place in the citation graph, as far as enrichment knows it."""

    references: int  # references its sources list (the longest list of one source)
    references_in_index: int  # of which papers in this index
    citations_in_index: int  # papers in this index that cite it
    references_url: str  # the API list of those references
    citations_url: str


class PaperResponse(Struct):
    paper: Paper
    graph: PaperGraph | None  # references and citations, when enrichment gave any
    warnings: Annotated[
        list[str],
        Meta(description="E.g. a version asked for that this index does not have (yet)."),
    ] = []


class SimilarResponse(Struct):
    paper: Paper
    similar: list[Hit]


class Category(Struct):
    category: str
    name: str
    count: Count
    url: Uri


class CategoriesResponse(Struct):
    categories: list[Category]


class Health(Struct):
    status: Literal["ok"]
    papers: Count
