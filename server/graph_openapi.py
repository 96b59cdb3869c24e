"""The OpenAPI operations of the paper graph, "papers like this text" and export (merged in
by ``server.openapi``); their schemas are generated from the msgspec Structs that decode and
encode them (``server.schemas``, ``server.graph_views``), so they cannot drift."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from papersift.core.config_search import SearchConfig
from papersift.feeds.export import EXPORT_FORMATS
from papersift.server.graph_views import SimilarRequest
from papersift.server.schemas import Error, SearchResponse
from papersift.server.search_openapi import PAPER_ID, search_parameters


def _export_schema(media: str) -> dict[str, Any]:
    """CSL-JSON is a JSON array of items (clients parse it as JSON); the others are text."""
    if "json" in media:
        return {"type": "array", "items": {"type": "object"}}
    return {"type": "string"}


def fill_similar_limits(schemas: dict[str, Any], cfg: SearchConfig) -> None:
    """Put this server's limits into the generated ``SimilarRequest`` schema."""
    props = schemas["SimilarRequest"]["properties"]
    props["text"]["maxLength"] = cfg.max_text_length
    props["text"]["description"] = (
        "A pasted abstract or paragraph. The model reads its first [embedding] max_length "
        "tokens (256 for the bundled MiniLM); whitespace is collapsed."
    )
    props["page_size"]["anyOf"][0]["maximum"] = cfg.max_page_size


def graph_paths(
    cfg: SearchConfig,
    body: Callable[[type[msgspec.Struct], str], dict[str, Any]],
    request_ref: Callable[[type[msgspec.Struct]], dict[str, str]],
    errors: dict[str, Any],
) -> dict[str, Any]:
    lists = {
        "references": ("paperReferences", "Papers in this index that this paper cites",
                       "citedby"),
        "citations": ("paperCitations", "Papers in this index that cite this paper", "cites"),
    }  # fmt: skip
    paths: dict[str, Any] = {}
    for which, (op, summary, field) in lists.items():
        paths[f"/api/v1/papers/{{id}}/{which}"] = {
            "get": {
                "operationId": op,
                "summary": summary,
                "description": f"The search `{field}:<id>` (with `q` added to it, and every "
                "filter, sort and page of a search); newest first unless `sort` says otherwise. "
                "Empty when enrichment (`papersift enrich`) has given the paper no edges.",
                "parameters": [PAPER_ID, *search_parameters(cfg)],
                "responses": {"200": body(SearchResponse, "One page of the list."), **errors},
            }
        }
    paths["/api/v1/similar"] = {
        "post": {
            "operationId": "similarToText",
            "summary": "Papers nearest in meaning to a pasted text",
            "description": "Plain cosine similarity between the text's embedding and the "
            "papers' (no floor), under the filters; the same hits as search. The text is not "
            "echoed back (`request.q` is empty) and `next` is null: post `page` + 1.",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": request_ref(SimilarRequest)}},
            },
            "responses": {
                "200": body(SearchResponse, "The nearest papers, nearest first."),
                "400": errors["400"],
                "413": body(Error, "The body is too large."),
            },
        }
    }
    search = [p for p in search_parameters(cfg) if p["name"] not in ("page", "page_size")]
    paths["/api/v1/export"] = {
        "get": {
            "operationId": "exportList",
            "summary": "A result list as BibTeX, RIS or CSL-JSON",
            "description": "Any list the search parameters describe (a search, a researcher's "
            "papers with `researcher_id`, a paper's references with `q=citedby:<id>` or "
            "citations with `q=cites:<id>`), its first `limit` papers in its order. `format` "
            "chooses the media type, not `Accept`: the body is text (a string) for `bibtex` "
            "and `ris`, a JSON array for `csl-json`.",
            "parameters": [
                {
                    "name": "format",
                    "in": "query",
                    "required": True,
                    "schema": {"enum": list(EXPORT_FORMATS)},
                },
                {
                    "name": "limit",
                    "in": "query",
                    "description": "How many (default and most: the result window).",
                    "schema": {"type": "integer", "minimum": 1, "maximum": cfg.max_window},
                },
                *search,
            ],
            "responses": {
                "200": {
                    "description": "The file (Content-Disposition: attachment).",
                    "content": {
                        media.split(";")[0]: {"schema": _export_schema(media)}
                        for media, _ in EXPORT_FORMATS.values()
                    },
                },
                "400": errors["400"],
            },
        }
    }
    return paths
