"""The OpenAPI 3.1 document of the JSON API; tests check it against the routes and responses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papersift.core.config import SearchConfig
from papersift.engine.results import MODES, SORTS
from papersift.server.admin_openapi import SECURITY_SCHEMES, admin_paths, admin_schemas
from papersift.server.institutions_openapi import institution_paths, institution_schemas
from papersift.server.people_openapi import people_paths, people_schemas
from papersift.server.recommend_schema import openapi_paths as recommend_paths
from papersift.server.recommend_schema import openapi_schemas as recommend_schemas
from papersift.server.search_openapi import PAPER_ID, param, search_parameters

_STR = {"type": "string"}
_NSTR = {"type": ["string", "null"]}
_DATE = {"type": "string", "format": "date"}
_NDATE = {"type": ["string", "null"], "format": "date"}
_INT = {"type": "integer", "minimum": 0}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props) if required is None else required,
    }


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _json(schema: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(schema)}}}


_ERRORS = {
    "400": _json("Error", "A parameter is malformed or out of range; `parameter` names it."),
    "404": _json("Error", "No such paper or route."),
}

SCHEMAS: dict[str, Any] = {
    "Error": _obj(
        {
            "error": _obj(
                {
                    "status": {"type": "integer"},
                    "code": {"type": "string", "examples": ["bad_request", "not_found"]},
                    "message": _STR,
                    "parameter": _STR,
                },
                ["status", "code", "message"],
            )
        }
    ),
    "Author": _obj({"name": _STR, "ids": {"type": "object", "additionalProperties": _STR}}),
    "Paper": _obj(
        {
            "id": {"type": "string", "examples": ["2401.10241", "cmp-lg/9405001"]},
            "version": {"type": "integer", "minimum": 1},
            "title": _STR,
            "abstract": _STR,
            "authors": _array(_ref("Author")),
            "categories": _array(_STR),
            "primary_category": _STR,
            "published": _DATE,
            "updated": _DATE,
            "doi": _NSTR,
            "journal_ref": _NSTR,
            "comments": _NSTR,
            "license": _NSTR,
            "citation_count": {"type": ["integer", "null"]},
            "url": {"type": "string", "format": "uri"},
            "abs_url": {"type": "string", "format": "uri"},
            "pdf_url": {"type": "string", "format": "uri"},
        }
    ),
    "Hit": _obj(
        {
            "paper": _ref("Paper"),
            "score": {"type": ["number", "null"]},
            "title_html": {"type": "string", "description": "Escaped title, query terms in <b>."},
            "snippet_html": {
                "type": "string",
                "description": "Escaped abstract excerpt, terms in <b>.",
            },
            "ranks": {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "description": "1-based rank in each retriever that found the paper "
                "(`keyword`, `semantic`); `title` when its title holds the query as a phrase "
                "and it was put first (see [search] title_phrase_max).",
            },
        }
    ),
    "FacetCount": _obj({"value": _STR, "count": _INT}),
    "SearchResponse": _obj(
        {
            "request": _obj(
                {
                    "q": _STR,
                    "mode": {"enum": [*MODES, None]},
                    "sort": {"enum": list(SORTS)},
                    "page": {"type": "integer"},
                    "page_size": {"type": "integer"},
                    "category": _array(_STR),
                    "researcher": _array(_STR),
                    "from": _NDATE,
                    "to": _NDATE,
                }
            ),
            "mode": {"enum": list(MODES), "description": "The mode actually used."},
            "total": {
                **_INT,
                "description": "Papers that match the query (keyword matches by "
                "minimum-should-match, semantic ones above the similarity floor; in hybrid "
                "mode both).",
            },
            "page": {"type": "integer"},
            "page_size": {"type": "integer"},
            "pages": {"type": "integer"},
            "took_ms": {"type": ["number", "null"]},
            "warnings": {**_array(_STR), "description": "What the lenient query parser ignored."},
            "direct": {
                "oneOf": [_ref("Paper"), {"type": "null"}],
                "description": "The paper, when the query was its arXiv id or URL.",
            },
            "missing_id": {
                "type": ["string", "null"],
                "description": "The arXiv id the query named, when this index does not hold it.",
            },
            "researchers": {
                **_array(_obj({"id": _INT, "name": _STR, "papers": _INT, "url": _STR})),
                "description": "Researchers whose name the query is (shown above the results).",
            },
            "facets": {"type": "object", "additionalProperties": _array(_ref("FacetCount"))},
            "hits": _array(_ref("Hit")),
            "next": {"type": ["string", "null"], "description": "URL of the next page, if any."},
        }
    ),
    "PaperResponse": _obj({"paper": _ref("Paper")}),
    "SimilarResponse": _obj({"paper": _ref("Paper"), "similar": _array(_ref("Hit"))}),
    "CategoriesResponse": _obj(
        {
            "categories": _array(
                _obj(
                    {
                        "category": _STR,
                        "name": _STR,
                        "count": _INT,
                        "url": {"type": "string", "format": "uri"},
                    }
                )
            )
        }
    ),
    "Stats": _obj(
        {
            "papers": _INT,
            "embedded": _INT,
            "coverage": {"type": ["number", "null"]},
            "researchers_pending": _INT,
            "model_id": _STR,
            "dimension": _INT,
            "newest": _NDATE,
            "oldest": _NDATE,
            "categories": _array(_ref("FacetCount")),
            "embedding": {"oneOf": [{"type": "null"}, _ref("EmbeddingProgress")]},
        }
    ),
    "EmbeddingProgress": _obj(
        {
            "model_id": _STR,
            "embedded": _INT,
            "total": _INT,
            "coverage": {"type": "number", "minimum": 0, "maximum": 1},
            "rate": {"type": ["number", "null"], "description": "papers/s last measured"},
            "reached": {**_NDATE, "description": "embedded newest first down to this date"},
            "reached_month": _NSTR,
            "eta_seconds": {"type": ["integer", "null"], "minimum": 0},
            "measured_at": {"type": ["string", "null"], "format": "date-time"},
        }
    ),
    "Health": _obj({"status": {"const": "ok"}, "papers": _INT}),
    **people_schemas(_obj, _array, _ref),
    **institution_schemas(_obj, _array, _ref),
    **admin_schemas(_obj, _array, _ref),
}


def openapi_document(
    root: str,
    cfg: SearchConfig,
    *,
    categories: Sequence[str] | None = None,
    admin: bool = True,
) -> dict[str, Any]:
    """The document, with the server URL, configured limits and (when given) the index's
    categories filled in; ``admin=False`` (no admin token) documents the admin routes as
    the 404s they then are."""
    get = "get"
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {
            "title": "papersift API",
            "version": "1.0.0",
            "summary": "Search arXiv papers by keyword and by meaning.",
            "description": "Read-only JSON API. Every error is an Error object. See /developers "
            "and /llms.txt.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "servers": [{"url": root}],
        "paths": {
            "/api/v1/search": {
                get: {
                    "operationId": "search",
                    "summary": "Search or browse papers",
                    "parameters": search_parameters(cfg, categories),
                    "responses": {
                        "200": _json("SearchResponse", "One page of results."),
                        "400": _ERRORS["400"],
                    },
                }
            },
            "/api/v1/papers/{id}": {
                get: {
                    "operationId": "getPaper",
                    "summary": "One paper by arXiv id",
                    "parameters": [PAPER_ID],
                    "responses": {"200": _json("PaperResponse", "The paper."), **_ERRORS},
                }
            },
            "/api/v1/papers/{id}/similar": {
                get: {
                    "operationId": "similarPapers",
                    "summary": "Papers close in meaning to one paper",
                    "parameters": [
                        PAPER_ID,
                        param(
                            "limit",
                            "How many (default 10).",
                            {"type": "integer", "minimum": 1, "maximum": 50},
                        ),
                    ],
                    "responses": {
                        "200": _json("SimilarResponse", "The paper and its neighbours."),
                        **_ERRORS,
                    },
                }
            },
            "/api/v1/categories": {
                get: {
                    "operationId": "listCategories",
                    "summary": "Categories with paper counts",
                    "responses": {
                        "200": _json("CategoriesResponse", "Every category, largest first.")
                    },
                }
            },
            "/api/v1/stats": {
                get: {
                    "operationId": "getStats",
                    "summary": "Corpus statistics",
                    "responses": {"200": _json("Stats", "Counts, model and date range.")},
                }
            },
            **people_paths(param, _json, _ERRORS),
            **institution_paths(param, _json, _ERRORS),
            **admin_paths(_json, enabled=admin),
            **recommend_paths(cfg, _ERRORS),
            "/healthz": {
                get: {
                    "operationId": "health",
                    "summary": "Liveness for orchestration",
                    "responses": {"200": _json("Health", "The app can answer.")},
                }
            },
        },
        "components": {
            "schemas": {**SCHEMAS, **recommend_schemas(cfg, categories)},
            "securitySchemes": SECURITY_SCHEMES,
        },
    }
