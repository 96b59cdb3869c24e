"""The institution part of the OpenAPI document (merged in by ``server.openapi``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from papersift.engine.affiliation_match import MAX_AFFILIATION
from papersift.server.paging import api_parameters
from papersift.server.schemas_institutions import (
    AffiliationMatch,
    InstitutionList,
    InstitutionResponse,
)

Fn = Callable[..., dict[str, Any]]


# A ROR id as ``papersift.engine.ror.parse_ror_id`` accepts it (any case, optionally as a URL).
ROR_ID = (
    "(?:[hH][tT][tT][pP][sS]?://[rR][oO][rR]\\.[oO][rR][gG]/)?"
    "0[a-hj-km-np-tv-zA-HJ-KM-NP-TV-Z0-9]{6}[0-9]{2}/?"
)


def institution_paths(_param: Fn, body: Fn, errors: dict[str, Any], moved: Fn) -> dict[str, Any]:
    return {
        "/api/v1/institutions": {
            "get": {
                "operationId": "listInstitutions",
                "summary": "Institutions (ROR registry) by name",
                "parameters": api_parameters(),
                "responses": {
                    "200": body(InstitutionList, "One page of institutions."),
                    "400": errors["400"],
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
                    "200": body(AffiliationMatch, "The match (or null) and the reasons."),
                    **errors,
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
                    "200": body(InstitutionResponse, "The institution."),
                    "301": moved("A ROR id: `Location` is the institution's under our id."),
                    **errors,
                },
            }
        },
    }
