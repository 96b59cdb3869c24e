"""The shapes of ``POST /api/v1/recommend`` (server.recommend_api), declared once as msgspec
Structs: they decode and check the body, encode the answer and give the OpenAPI components."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from papersift.core.config_search import SearchConfig
from papersift.engine.recommend import MAX_SEEDS
from papersift.server.institutions_openapi import ROR_ID
from papersift.server.params import MAX_FILTER_VALUES, MAX_RESEARCHER_LENGTH
from papersift.server.schemas import Hit
from papersift.server.search_openapi import ARXIV_ID_PATTERN, CATEGORY, DATE_PATTERN

Ids = Annotated[
    list[Annotated[str, msgspec.Meta(pattern=ARXIV_ID_PATTERN)]],
    msgspec.Meta(min_length=1, max_length=MAX_SEEDS),
]
Values = Annotated[list[str], msgspec.Meta(max_length=MAX_FILTER_VALUES)]
Names = Annotated[
    list[Annotated[str, msgspec.Meta(max_length=MAX_RESEARCHER_LENGTH)]],
    msgspec.Meta(max_length=MAX_FILTER_VALUES),
]
Rors = Annotated[
    list[Annotated[str, msgspec.Meta(pattern=f"^(?:{ROR_ID})?$")]],
    msgspec.Meta(max_length=MAX_FILTER_VALUES),
]
Day = Annotated[str, msgspec.Meta(pattern=DATE_PATTERN)]


class RecommendRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Seed papers and where to look. Without `from` and `to`: the 30 days up to the newest
    paper. The filters are those of /api/v1/search."""

    ids: Ids
    from_: Day | None = msgspec.field(default=None, name="from")
    to: Day | None = None
    page: Annotated[int, msgspec.Meta(ge=1)] = 1
    page_size: Annotated[int, msgspec.Meta(ge=1)] | None = None
    category: Values = msgspec.field(default_factory=list)
    researcher: Names = msgspec.field(default_factory=list)
    researcher_id: Annotated[
        list[Annotated[int, msgspec.Meta(ge=1, le=999_999_999)]],
        msgspec.Meta(max_length=MAX_FILTER_VALUES),
    ] = msgspec.field(default_factory=list)
    institution: Rors = msgspec.field(default_factory=list)


class RecommendResponse(msgspec.Struct, kw_only=True):
    """The window's papers close to the seeds (never a seed), best first: those the model
    scores at or above its floor. `total` counts them, `ranked` all the papers of the window
    (and filters) that were scored; a window with none close answers no hits and a warning
    saying so."""

    total: int  # papers of the window and filters at or above the floor
    ranked: int  # papers of the window and filters that were scored
    page: int
    page_size: int
    pages: int
    from_: str | None = msgspec.field(name="from")
    to: str | None
    seeds: list[str]  # the seeds used: found here, with a vector
    warnings: list[str]
    hits: list[Hit]  # as /api/v1/search answers them


def openapi_schemas(cfg: SearchConfig) -> dict[str, Any]:
    """The components of both Structs, with this server's limits and the category codes
    the search operation states; hits are the document's Hit."""
    _, components = msgspec.json.schema_components(
        [RecommendRequest, RecommendResponse], ref_template="#/components/schemas/{name}"
    )
    props = components["RecommendRequest"]["properties"]
    props["page"]["maximum"] = cfg.max_window
    props["page_size"]["anyOf"][0]["maximum"] = cfg.max_page_size
    props["category"]["items"] = CATEGORY
    return components


def openapi_paths(cfg: SearchConfig, errors: dict[str, Any]) -> dict[str, Any]:
    ref = "#/components/schemas/"
    return {
        "/api/v1/recommend": {
            "post": {
                "operationId": "recommend",
                "summary": "Papers like some seed papers, over a date window",
                "description": "Ranks the papers of the window (and the search filters) by "
                "a linear SVM on tf-idf fitted on the seeds against a sample of other papers "
                "(the seeds' vector centroid when it cannot be fitted) and answers those "
                "scoring at or above a floor, best first; a window with nothing close to the "
                "seeds answers no hits and a warning. Seeds are never recommended. "
                f"`page_size` at most {cfg.max_page_size}; page x page_size at most "
                f"{cfg.max_window}.",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": ref + "RecommendRequest"}}},
                },
                "responses": {
                    "200": {
                        "description": "One page of recommendations.",
                        "content": {
                            "application/json": {"schema": {"$ref": ref + "RecommendResponse"}}
                        },
                    },
                    "400": errors["400"],
                },
            }
        }
    }
