"""The search and paper-id parameters of the OpenAPI document, stating exactly what
``server.params`` and the paper routes accept (merged in by ``server.openapi``)."""

from __future__ import annotations

from typing import Any

from papersift.core.config_search import SearchConfig
from papersift.engine.results import MODES, SORTS
from papersift.server.http_protocol import URL_LIMIT
from papersift.server.institutions_openapi import ROR_ID
from papersift.server.params import (
    FLAG_VALUES,
    MAX_FILTER_VALUES,
    MAX_PAGE,
    MAX_RESEARCHER_ID,
    MAX_RESEARCHER_LENGTH,
)

# Exactly the dates ``server.params.parse_date`` accepts: a year (0001-9999), a month of it or
# a real day of it (29 February only in leap years); or empty, which means "not given".
_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DAY = (
    r"(?:0?[13578]|1[02])-(?:0?[1-9]|[12][0-9]|3[01])|(?:0?[469]|11)-(?:0?[1-9]|[12][0-9]|30)"
    r"|0?2-(?:0?[1-9]|1[0-9]|2[0-8])"
)
DATE_PATTERN = rf"^(?:{_YEAR}(?:-(?:0?[1-9]|1[0-2])|-(?:{_DAY}))?|{_LEAP}-0?2-29)?$"
# New- and old-style arXiv ids as the API's paper routes accept them (``arXiv:`` prefix and
# a version optional); see ``server.urls.parse_paper_path``.
ARXIV_ID_PATTERN = (
    r"^(?:[aA][rR][xX][iI][vV]:)?(?:[0-9]{4}\.[0-9]{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/[0-9]{7})"
    r"(?:v0*(?:[1-9][0-9]{0,2}|1000))?/?$"  # versions 1..papersift.paper.MAX_VERSION
)


# A category or archive code as ``server.params`` reads it (any case), alone or in a
# comma-separated list (empty items are ignored). Not the list of this index's categories:
# that changes with every harvest, and a generated client must not go stale with it; a
# code with no paper here is a 400 that names /categories.
_CODE = r"[A-Za-z][A-Za-z-]{0,30}(?:\.[A-Za-z-]{1,30})?"
CATEGORY: dict[str, Any] = {
    "type": "string",
    "pattern": rf"^\s*(?:{_CODE}\s*)?(?:,\s*(?:{_CODE}\s*)?)*$",
    "description": "An arXiv category (cs.IR) or archive (cs: all of cs.*), any case. "
    "The ones this index holds, with their paper counts: GET /api/v1/categories.",
    "examples": ["cs.IR", "cs", "hep-th", "physics.acc-ph", "cs.CL,cs.LG"],
}


def param(name: str, description: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": schema, **extra}


def _or_empty(schema: dict[str, Any]) -> dict[str, Any]:
    """An empty value (``page=``, as HTML forms send it) means "not given"."""
    return {"anyOf": [schema, {"const": ""}]}


def search_parameters(cfg: SearchConfig) -> list[dict[str, Any]]:
    """The search parameters, with the limits this server is configured with."""
    return [
        param(
            "q",
            'Words, "quoted phrases", -excluded words, or an arXiv id or URL. Empty: '
            "browse newest first. " + URL_LIMIT,
            {"type": "string", "maxLength": cfg.max_text_length},
        ),
        param(
            "mode",
            "keyword (BM25), semantic (embeddings) or hybrid (both, fused), as listed; the "
            "server also reads them in any other case (`KEYWORD`), which this schema does not "
            "list. Default (or empty): the server's.",
            {"enum": ["", *MODES]},
        ),
        param(
            "category",
            "Only papers in any of these categories; an archive such as `cs` "
            "matches all of `cs.*`; any case. Repeatable or comma-separated; empty values are "
            f"ignored and repeated ones count once (at most {MAX_FILTER_VALUES}). A category "
            "with no paper in this index is a 400; GET /api/v1/categories lists those it has.",
            {"type": "array", "items": CATEGORY, "maxItems": MAX_FILTER_VALUES},
            style="form",
            explode=True,
        ),
        param(
            "researcher",
            "Only papers by all of these authors. Repeatable; empty values are ignored and "
            f"repeated ones count once (at most {MAX_FILTER_VALUES}).",
            {
                "type": "array",
                "items": {"type": "string", "maxLength": MAX_RESEARCHER_LENGTH},
                "maxItems": MAX_FILTER_VALUES,
            },
            style="form",
            explode=True,
        ),
        param(
            "researcher_id",
            "Only papers by all of these researchers (ids from /api/v1/researchers). "
            "Repeatable or comma-separated; repeated ones count once.",
            {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": MAX_RESEARCHER_ID},
                "maxItems": MAX_FILTER_VALUES,
            },
            style="form",
            explode=True,
        ),
        param(
            "institution",
            "Only papers with authors at all of these institutions (ROR ids, bare or as "
            "ror.org URLs; linked by enrichment). Repeatable or comma-separated; empty values "
            "are ignored and repeated ones count once. One no paper in the index has is a 400, "
            "as an unknown category is.",
            {
                "type": "array",
                "items": {"type": "string", "pattern": f"^(?:{ROR_ID})?$"},
                "maxItems": MAX_FILTER_VALUES,
            },
            style="form",
            explode=True,
        ),
        param(
            "from",
            "Published on or after: 2024, 2024-05 or 2024-05-17; not after `to`.",
            {"type": "string", "pattern": DATE_PATTERN},
        ),
        param(
            "to",
            "Published on or before: 2024, 2024-05 or 2024-05-17.",
            {"type": "string", "pattern": DATE_PATTERN},
        ),
        param(
            "sort",
            "As listed; the server also reads the values in any other case (`NEWEST`), which "
            "this schema does not list. Default (or empty): relevance with a query, newest "
            "without.",
            {"enum": ["", *SORTS]},
        ),
        param(
            "page",
            "1-based. A page after the last one is empty (200), and its `warnings` name "
            f"the last page. Only the first {cfg.max_window} results can be paged through "
            "(the result window): for a list that runs on past them, a page whose page x "
            f"page_size passes {cfg.max_window} is a 400 that says how many pages (and "
            "results) can be reached.",
            _or_empty({"type": "integer", "minimum": 1, "maximum": MAX_PAGE}),
        ),
        param(
            "page_size",
            f"Hits per page (default {cfg.page_size}).",
            _or_empty({"type": "integer", "minimum": 1, "maximum": cfg.max_page_size}),
        ),
        param(
            "autocorrect",
            "1 (default, or empty): when no paper matches the query as typed and its "
            "`suggestion` (did you mean) matches some, answer the suggestion, and say so in "
            "`corrected`. 0: always search the query as typed. Also true/false, yes/no, on/off.",
            {"enum": ["", *FLAG_VALUES]},
        ),
    ]


PAPER_ID = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "arXiv id, new style (2401.10241, optionally with a version) or old "
    "style (cmp-lg/9405001, with its slash unescaped).",
    "schema": {"type": "string", "pattern": ARXIV_ID_PATTERN},
}
