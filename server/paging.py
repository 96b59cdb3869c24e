"""Paging of the name lists (researchers and institutions, as pages and in the JSON API):
the page parameters, the offset, and the prev/next links, built in one place.

Links come from ``papersift.core.urls.with_query``, which encodes every value, so a query
such as ``an & b`` or ``a#b`` comes back unchanged on the next page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from papersift.core.urls import with_query
from papersift.server.params import check_params, clean_text, int_param

MAX_QUERY = 200  # characters of a name query
MAX_PAGE = 10_000
API_LIMIT = 20  # the API's page size unless ``limit`` says otherwise
API_MAX_LIMIT = 100
API_PARAMS = ("q", "page", "limit")


@dataclass(frozen=True, slots=True)
class NamePage:
    """One page of a name list: the cleaned query, the 1-based page and its size.

    ``api`` pages take ``limit`` and carry it in their links; HTML pages have a fixed size."""

    path: str
    q: str
    page: int
    size: int
    api: bool = False

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size

    def link(self, page: int) -> str:
        """The URL of another page of the same list (page 1 and an empty query left out)."""
        return with_query(
            self.path,
            [
                ("q", self.q),
                ("page", page if page > 1 else None),
                ("limit", self.size if self.api else None),
            ],
        )

    def last(self, total: int) -> int:
        """The last page of a list of ``total`` names (1 for an empty list)."""
        return max(1, -(-total // self.size))

    def next(self, total: int) -> str | None:
        return self.link(self.page + 1) if self.page * self.size < total else None

    def prev(self) -> str | None:
        return self.link(self.page - 1) if self.page > 1 else None


def name_page(request: Request, path: str, *, size: int) -> NamePage:
    """The page an HTML list asks for (lenient: other parameters are ignored)."""
    params = request.query_params
    q = clean_text(params.get("q", ""))[:MAX_QUERY]
    return NamePage(path, q, int_param(params, "page", 1, MAX_PAGE), size)


def api_page(request: Request, path: str) -> NamePage:
    """The page an API list asks for; an unknown or repeated parameter is a 400 naming it."""
    params = request.query_params
    check_params(params, API_PARAMS)
    q = clean_text(params.get("q", ""))[:MAX_QUERY]
    limit = int_param(params, "limit", API_LIMIT, API_MAX_LIMIT)
    return NamePage(path, q, int_param(params, "page", 1, MAX_PAGE), limit, api=True)


def api_parameters() -> list[dict[str, Any]]:
    """The OpenAPI parameters of an API name list: what ``api_page`` accepts."""

    def query(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "in": "query", "description": description, "schema": schema}

    return [
        query("q", "Words of the name (accents and case do not matter).", {"type": "string"}),
        query("page", "1-based.", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE}),
        query(
            "limit",
            f"Per page (default {API_LIMIT}).",
            {"type": "integer", "minimum": 1, "maximum": API_MAX_LIMIT},
        ),
    ]
