"""The institution part of the OpenAPI document (merged in by ``server.openapi``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from papersift.engine.affiliation_match import MAX_AFFILIATION

_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 0}
Fn = Callable[..., dict[str, Any]]


def institution_schemas(_obj: Fn, _array: Fn, _ref: Fn) -> dict[str, Any]:
    return {
        "Institution": _obj(
            {
                "id": {"type": "integer", "minimum": 1, "description": "Stable; never reused."},
                "ror": {"type": "string", "format": "uri"},
                "name": _STR,
                "country": _STR,
                "city": _STR,
                "types": _array(_STR),
                "url": {"type": "string", "format": "uri"},
                "papers_url": {"type": "string", "format": "uri"},
            }
        ),
        "InstitutionList": _obj(
            {
                "q": _STR,
                "total": _INT,
                "page": {"type": "integer", "minimum": 1},
                "institutions": _array(_ref("Institution")),
                "next": {"type": ["string", "null"]},
            }
        ),
        "AffiliationMatch": _obj(
            {
                "affiliation": {**_STR, "description": "The text matched (cleaned)."},
                "match": {
                    "oneOf": [
                        {"type": "null"},
                        _obj(
                            {
                                "ror": {"type": "string", "format": "uri"},
                                "name": _STR,
                                "matched": {**_STR, "description": "The normalised words."},
                                "how": {"enum": ["exact", "contained"]},
                                "id": {"type": ["integer", "null"], "minimum": 1},
                            }
                        ),
                    ],
                    "description": "Null when unsure: no match rather than a wrong one.",
                },
                "reason": {**_STR, "description": "Why it matched, or why not, in words."},
                "parts": _array(_STR),
                "places": _array(_STR),
                "candidates": _array(
                    _obj({"text": _STR, "ror": _array({"type": "string", "format": "uri"})})
                ),
                "institution": {"oneOf": [{"type": "null"}, _ref("Institution")]},
            }
        ),
        "InstitutionResponse": _obj(
            {
                "institution": {
                    "allOf": [
                        _ref("Institution"),
                        _obj(
                            {
                                "aliases": _array(_STR),
                                "status": _STR,
                                "parents": _array(_ref("Institution")),
                                "papers": {**_INT, "description": "Papers linked by enrichment."},
                                "researchers": _INT,
                                "members": _array(
                                    _obj(
                                        {
                                            "id": {"type": "integer", "minimum": 1},
                                            "name": _STR,
                                            "papers": _INT,
                                            "url": {"type": "string", "format": "uri"},
                                        }
                                    )
                                ),
                            }
                        ),
                    ]
                }
            }
        ),
    }


# A ROR id as ``papersift.engine.ror.parse_ror_id`` accepts it (any case, optionally as a URL).
ROR_ID = (
    "(?:[hH][tT][tT][pP][sS]?://[rR][oO][rR]\\.[oO][rR][gG]/)?"
    "0[a-hj-km-np-tv-zA-HJ-KM-NP-TV-Z0-9]{6}[0-9]{2}/?"
)


def institution_paths(_param: Fn, _json: Fn, _ERRORS: dict[str, Any]) -> dict[str, Any]:
    return {
        "/api/v1/institutions": {
            "get": {
                "operationId": "listInstitutions",
                "summary": "Institutions (ROR registry) by name",
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
                    "200": _json("InstitutionList", "One page of institutions."),
                    "400": _ERRORS["400"],
                },
            }
        },
        "/api/v1/institutions/match": {
            "get": {
                "operationId": "matchAffiliation",
                "summary": "Match a raw affiliation string to a ROR id, and say why",
                "parameters": [
                    _param(
                        "q",
                        "An affiliation as a paper prints it, e.g. 'Dept. of Physics, Univ. "
                        "of Oxford, UK'.",
                        {"type": "string", "maxLength": MAX_AFFILIATION},
                        required=True,
                    ),
                ],
                "responses": {
                    "200": _json("AffiliationMatch", "The match (or null) and the reasons."),
                    **_ERRORS,
                },
            }
        },
        "/api/v1/institutions/{id}": {
            "get": {
                "operationId": "getInstitution",
                "summary": "One institution: its researchers and paper counts",
                "parameters": [
                    {
                        "name": "id",
                        "in": "path",
                        "required": True,
                        "description": "Our institution id; a ROR id (bare or as its ror.org "
                        "URL) answers 301 to it.",
                        "schema": {"type": "string", "pattern": f"^(?:[0-9]{{1,12}}|{ROR_ID})$"},
                    }
                ],
                "responses": {
                    "200": _json("InstitutionResponse", "The institution."),
                    **_ERRORS,
                },
            }
        },
    }
