"""The researcher part of the OpenAPI document (merged in by ``server.openapi``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 0}
get = "get"
Fn = Callable[..., dict[str, Any]]


def people_schemas(_obj: Fn, _array: Fn, _ref: Fn) -> dict[str, Any]:
    return {
        "Researcher": _obj(
            {
                "id": {"type": "integer", "minimum": 1, "description": "Stable; never reused."},
                "name": _STR,
                "papers": _INT,
                "collective": {"type": "boolean", "description": "A collaboration or group."},
                "url": {"type": "string", "format": "uri"},
                "papers_url": {"type": "string", "format": "uri"},
            }
        ),
        "ResearcherList": _obj(
            {
                "q": _STR,
                "total": _INT,
                "page": {"type": "integer", "minimum": 1},
                "researchers": _array(_ref("Researcher")),
                "next": {"type": ["string", "null"]},
            }
        ),
        "ResearcherResponse": _obj(
            {
                "researcher": {
                    "allOf": [
                        _ref("Researcher"),
                        _obj(
                            {
                                "ids": {
                                    "type": "object",
                                    "additionalProperties": _STR,
                                    "description": "orcid, openalex, s2 where known.",
                                },
                                "variants": {**_array(_STR), "description": "Spellings seen."},
                                "positions": _obj(
                                    {k: _INT for k in ("first", "middle", "last", "solo", "known")}
                                ),
                                "years": _array(
                                    _obj({"year": {"type": "integer"}, "papers": _INT})
                                ),
                                "categories": _array(_obj({"category": _STR, "papers": _INT})),
                                "coauthors": _array(
                                    {"allOf": [_ref("Researcher"), _obj({"shared": _INT})]}
                                ),
                                "same_name": _array(
                                    {
                                        "allOf": [_ref("Researcher"), _obj({"reason": _STR})],
                                        "description": "Similar names kept apart, and why.",
                                    }
                                ),
                            }
                        ),
                    ]
                }
            }
        ),
    }


def people_paths(_param: Fn, _json: Fn, _ERRORS: dict[str, Any]) -> dict[str, Any]:
    return {
        "/api/v1/researchers": {
            get: {
                "operationId": "listResearchers",
                "summary": "Researchers by name, most papers first",
                "parameters": [
                    _param("q", "Words of the name (accents and case do not matter).", _STR),
                    _param(
                        "page", "1-based.", {"type": "integer", "minimum": 1, "maximum": 10_000}
                    ),
                    _param(
                        "limit",
                        "Per page (default 20).",
                        {"type": "integer", "minimum": 1, "maximum": 100},
                    ),
                ],
                "responses": {
                    "200": _json("ResearcherList", "One page of researchers."),
                    "400": _ERRORS["400"],
                },
            }
        },
        "/api/v1/researchers/{id}": {
            get: {
                "operationId": "getResearcher",
                "summary": "One researcher: positions, years, fields, co-authors",
                "parameters": [
                    {
                        "name": "id",
                        "in": "path",
                        "required": True,
                        "description": "Researcher id. The id of a researcher merged "
                        "into another answers 301 to that one.",
                        "schema": {"type": "string", "pattern": "^[0-9]{1,12}$"},
                    }
                ],
                "responses": {
                    "200": _json("ResearcherResponse", "The researcher."),
                    **_ERRORS,
                },
            }
        },
    }
