"""``POST /api/v1/recommend``: papers like the seed papers, over a date window and the search
filters; stateless (the seeds come with the request). Shapes: ``server.recommend_schema``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import msgspec
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from papersift.core.config_search import SearchConfig
from papersift.engine.recommend import Recommendations, recommend
from papersift.engine.search import SearchEngine
from papersift.server.bodies import hit_body
from papersift.server.context import ctx
from papersift.server.graph_api import DATE_EXPECTED, decode_json, schema_error
from papersift.server.params import ParamError, parse_search, window_error, window_last_page
from papersift.server.recommend_schema import RecommendRequest, RecommendResponse
from papersift.server.urls import site_root

_EXPECTED = {
    "ids": "arXiv ids such as 2401.10241 or cmp-lg/9405001",
    "from": DATE_EXPECTED,
    "to": DATE_EXPECTED,
}
_INTS = ("page", "page_size")


def _decode(raw: bytes) -> RecommendRequest:
    """The body as a RecommendRequest. JSON Schema counts 2.0 as an integer, msgspec does
    not: integral numbers of the integer fields become ints first, nothing else is coerced."""
    data = decode_json(raw)
    if isinstance(data, dict):
        for name in _INTS:
            if isinstance(data.get(name), float) and data[name].is_integer():
                data[name] = int(data[name])
        ids = data.get("researcher_id")
        if isinstance(ids, list):
            data["researcher_id"] = [
                int(v) if isinstance(v, float) and v.is_integer() else v for v in ids
            ]
    return msgspec.convert(data, RecommendRequest)


def _filters_of(body: RecommendRequest) -> QueryParams:
    """The body as the search parameters it shares, so they are checked the same way."""
    pairs: list[tuple[str, str]] = [("page", str(body.page))]
    if body.page_size is not None:
        pairs.append(("page_size", str(body.page_size)))
    for name, value in (("from", body.from_), ("to", body.to)):
        if value:
            pairs.append((name, value))
    for name in ("category", "researcher", "institution"):
        pairs += [(name, v) for v in getattr(body, name)]
    pairs += [("researcher_id", str(v)) for v in body.researcher_id]
    return QueryParams(pairs)


def _last_page(result: Recommendations, max_window: int) -> int:
    return window_last_page(-(-result.total // result.page_size), result.page_size, max_window)


def page_of(
    answer: Callable[[int], Recommendations], page: int, size: int, cfg: SearchConfig
) -> Recommendations:
    """Page ``page`` of the recommendations ``answer(page)`` gives, as a search's
    (``engine.list_page.window_page``): past the result window, the empty page after the
    last when the list ends inside the window, else the window's 400."""
    if page * size <= cfg.max_window:
        return answer(page)
    first = answer(1)
    if first.total > _last_page(first, cfg.max_window) * size:  # it runs on past the window
        raise window_error(cfg.max_window, size, page)
    return dataclasses.replace(first, page=page, hits=())


def response_of(result: Recommendations, root: str, max_window: int) -> RecommendResponse:
    """The answer; ``pages`` counts only the pages a request may ask for (the window's), and
    a page past the last says so in ``warnings``, as a search's (``views.past_last``)."""
    last = _last_page(result, max_window)
    warnings = list(result.warnings)
    if not result.hits and result.page > last:
        warnings.append(f"page {result.page:,} is past the last page ({last:,})")
    return RecommendResponse(
        total=result.total,
        ranked=result.ranked,
        page=result.page,
        page_size=result.page_size,
        pages=last,
        from_=result.date_from.isoformat() if result.date_from else None,
        to=result.date_to.isoformat() if result.date_to else None,
        seeds=list(result.seeds),
        warnings=warnings,
        hits=[hit_body(h, root) for h in result.hits],
    )


async def recommend_route(request: Request) -> Response:
    c = ctx(request)
    if not isinstance(c.engine, SearchEngine):
        raise ParamError("ids", "This server cannot recommend.")
    if "json" not in request.headers.get("content-type", ""):
        raise ParamError("body", "Send a JSON object (Content-Type: application/json).")
    try:
        body = _decode(await request.body())
    except msgspec.ValidationError as exc:
        raise schema_error(exc, _EXPECTED) from None
    cfg = c.config.search
    req = parse_search(
        _filters_of(body), cfg, strict=True, known_categories=await c.known_categories(),
        known_institution=c.engine.holds_institution,
        window=False,  # a page past the window: the empty page after the last, as search's
    )  # fmt: skip
    engine = c.engine

    def answer(page: int) -> Recommendations:
        return recommend(engine, body.ids, req.filters, page, req.page_size)

    result = await c.call(page_of, answer, req.page, req.page_size or cfg.page_size, cfg)
    payload = msgspec.json.encode(response_of(result, site_root(request), cfg.max_window))
    return Response(payload, media_type="application/json", headers={"Cache-Control": "no-store"})


routes = [Route("/api/v1/recommend", recommend_route, methods=["POST"])]
