"""The researcher part of the OpenAPI document (merged in by ``server.openapi``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from papersift.server.paging import api_parameters
from papersift.server.schemas_people import ResearcherList, ResearcherResponse

get = "get"
Fn = Callable[..., dict[str, Any]]


def people_paths(body: Fn, errors: dict[str, Any], moved: Fn) -> dict[str, Any]:
    return {
        "/api/v1/researchers": {
            get: {
                "operationId": "listResearchers",
                "summary": "Researchers by name, most papers first",
                "parameters": api_parameters(),
                "responses": {
                    "200": body(ResearcherList, "One page of researchers."),
                    "400": errors["400"],
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
                    "200": body(ResearcherResponse, "The researcher."),
                    "301": moved(
                        "The id of a researcher merged into another (by a later clustering): "
                        "`Location` is that one's."
                    ),
                    **errors,
                },
            }
        },
    }
