"""The OpenAPI 3.1 document of the JSON API. The operations are declared here; every schema
in it is generated from the response Structs the routes encode (``server.schemas*``), so the
document and the responses cannot drift. Tests check it against the routes and responses."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import msgspec

from papersift.core.config_search import SearchConfig
from papersift.engine.serialize import Stats
from papersift.server.admin_openapi import SECURITY_SCHEMES, admin_paths
from papersift.server.graph_openapi import fill_similar_limits, graph_paths
from papersift.server.institutions_openapi import institution_paths
from papersift.server.people_openapi import people_paths
from papersift.server.recommend_schema import openapi_paths as recommend_paths
from papersift.server.recommend_schema import openapi_schemas as recommend_schemas
from papersift.server.schemas import (
    CategoriesResponse,
    Error,
    Health,
    PaperResponse,
    SearchResponse,
    SimilarResponse,
)
from papersift.server.search_openapi import PAPER_ID, param, search_parameters

REF = "#/components/schemas/{name}"


class Bodies:
    """Builds an operation's JSON response object from the Struct it answers with, and
    keeps the Structs used, whose components the document then generates."""

    def __init__(self) -> None:
        self.types: dict[str, type[msgspec.Struct]] = {}

    def __call__(self, kind: type[msgspec.Struct], description: str) -> dict[str, Any]:
        return {
            "description": description,
            "content": {"application/json": {"schema": self.ref(kind)}},
        }

    def ref(self, kind: type[msgspec.Struct]) -> dict[str, str]:
        """A reference to ``kind``'s component (a response, or a request body)."""
        name = kind.__name__
        if self.types.setdefault(name, kind) is not kind:
            raise ValueError(f"two types are called {name}")
        return {"$ref": REF.format(name=name)}


@cache
def components(kinds: tuple[type[msgspec.Struct], ...]) -> dict[str, Any]:
    """The JSON Schemas of these Structs and of every type they hold, by name."""
    _, schemas = msgspec.json.schema_components(kinds, ref_template=REF)
    return schemas


# The operations' groups (a generated client's modules), by path prefix; the first that
# matches. Every operation has one, or building the document fails.
TAGS = (
    ("search", "Search, papers like a text or like seed papers, and export of result lists.",
     ("/api/v1/search", "/api/v1/similar", "/api/v1/recommend", "/api/v1/export")),
    ("papers", "One paper, its similar papers, references and citations.",
     ("/api/v1/papers/",)),
    ("researchers", "Researchers (authors clustered by name, ORCID and co-authors).",
     ("/api/v1/researchers",)),
    ("institutions", "Institutions of the ROR registry, and affiliation matching.",
     ("/api/v1/institutions",)),
    ("index", "What this index holds (categories, counts) and whether the server is up.",
     ("/api/v1/categories", "/api/v1/stats", "/healthz")),
    ("admin", "The scheduler's jobs; needs the server's admin token.", ("/api/v1/admin/",)),
)  # fmt: skip
DESCRIPTION = (
    "The JSON API of a papersift server: every operation but the admin ones is open and "
    "only reads (`POST /api/v1/similar` and `/api/v1/recommend` post a body to search "
    "with, and change nothing); the admin operations, with the server's admin token, start "
    "its jobs. Every error is an Error object. The server's own feeds (RSS, Atom), pages "
    "and their markdown forms are not part of it: see /developers and /llms.txt."
)


def moved(description: str) -> dict[str, Any]:
    """A 301 response: no body, the URL to follow in ``Location``."""
    location = {"description": "Where the resource is.", "schema": {"type": "string"}}
    return {"description": description, "headers": {"Location": location}}


def _tag(path: str) -> str:
    for name, _, prefixes in TAGS:
        if path.startswith(prefixes):
            return name
    raise ValueError(f"no OpenAPI tag for {path}")


def _finish_operations(paths: dict[str, Any], method_error: dict[str, Any]) -> None:
    """Give every operation its tag, and the 405 any other method on its path answers."""
    for path, operations in paths.items():
        for op in operations.values():
            op["tags"] = [_tag(path)]
            op["responses"].setdefault("405", method_error)


def openapi_document(root: str, cfg: SearchConfig, *, admin: bool = True) -> dict[str, Any]:
    """The document, with the server URL and configured limits filled in; ``admin=False``
    (no admin token) documents the admin routes as the 404s they then are."""
    get = "get"
    body = Bodies()
    errors = {
        "400": body(Error, "A parameter is malformed or out of range; `parameter` names it."),
        "404": body(Error, "No such paper or route."),
    }
    paths = {
        "/api/v1/search": {
            get: {
                "operationId": "search",
                "summary": "Search or browse papers",
                "parameters": search_parameters(cfg),
                "responses": {
                    "200": body(SearchResponse, "One page of results."),
                    "400": errors["400"],
                },
            }
        },
        "/api/v1/papers/{id}": {
            get: {
                "operationId": "getPaper",
                "summary": "One paper by arXiv id",
                "parameters": [PAPER_ID],
                "responses": {"200": body(PaperResponse, "The paper."), **errors},
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
                    "200": body(SimilarResponse, "The paper and its neighbours."),
                    **errors,
                },
            }
        },
        "/api/v1/categories": {
            get: {
                "operationId": "listCategories",
                "summary": "Categories with paper counts",
                "responses": {
                    "200": body(CategoriesResponse, "Every category, largest first."),
                    "400": errors["400"],
                },
            }
        },
        "/api/v1/stats": {
            get: {
                "operationId": "getStats",
                "summary": "Corpus statistics",
                "responses": {
                    "200": body(Stats, "Counts, model and date range."),
                    "400": errors["400"],
                },
            }
        },
        **people_paths(body, errors, moved),
        **institution_paths(param, body, errors, moved),
        **graph_paths(cfg, body, body.ref, errors),
        **admin_paths(body, enabled=admin),
        **recommend_paths(cfg, errors),
        "/healthz": {
            get: {
                "operationId": "health",
                "summary": "Liveness for orchestration",
                "responses": {"200": body(Health, "The app can answer.")},
            }
        },
    }
    _finish_operations(
        paths,
        body(Error, "The path has no operation for this method; `Allow` lists those it has."),
    )
    schemas = copy.deepcopy(components(tuple(body.types.values())))  # cached: copy to fill in
    fill_similar_limits(schemas, cfg)
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {
            "title": "papersift API",
            "version": "1.0.0",
            "summary": "Search arXiv papers by keyword and by meaning.",
            "description": DESCRIPTION,
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "servers": [{"url": root}],
        "tags": [{"name": name, "description": text} for name, text, _ in TAGS],
        "paths": paths,
        "components": {
            "schemas": {**schemas, **recommend_schemas(cfg)},
            "securitySchemes": SECURITY_SCHEMES,
        },
    }
