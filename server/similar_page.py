"""The "papers like this text" page: a form (plain GET or POST, no script) and the papers
nearest in meaning to the pasted text (``engine.like_text``)."""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from papersift.engine.results import Filters, SearchResult
from papersift.server.context import ctx
from papersift.server.graph_api import read_body
from papersift.server.params import MAX_FILTER_VALUES, ParamError, clean_text
from papersift.server.templating import page_meta, render

FORM_LIMIT_FACTOR = 12  # form-encoding writes a non-ASCII character as up to 12 bytes


async def _fields(request: Request, limit: int) -> dict[str, list[str]]:
    if request.method == "POST":
        raw = await read_body(request, limit)
        return parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: request.query_params.getlist(k) for k in request.query_params}


async def similar(request: Request) -> Response:
    c = ctx(request)
    cfg = c.config.search
    fields = await _fields(request, FORM_LIMIT_FACTOR * cfg.max_text_length + 4096)
    text = clean_text((fields.get("text") or [""])[-1])
    categories = tuple(v.strip() for v in fields.get("category", []) if v.strip())
    if len(categories) > MAX_FILTER_VALUES:
        raise ParamError("category", f"Give at most {MAX_FILTER_VALUES} categories.")
    if len(text) > cfg.max_text_length:
        raise ParamError(
            "text", f"The text has {len(text):,} characters; the limit is {cfg.max_text_length:,}."
        )
    result: SearchResult | None = None
    if text:
        filters = Filters(categories=categories)
        result = await c.call(c.engine.similar_text, text, filters, 1, None)
    context = page_meta(
        request,
        title="Papers like this text - papersift",
        description="Paste an abstract or a paragraph: the papers nearest to it in meaning.",
        path="/similar",
        trail=[("Papers like this text", "/similar")],
        robots="noindex,follow" if text else "index,follow",
    )
    context.update(
        text=text,
        category=categories[0] if categories else "",
        result=result,
        max_length=c.config.embedding.max_length,
        max_text=cfg.max_text_length,
    )
    return render(request, "similar.html", context)


routes = [Route("/similar", similar, methods=["GET", "HEAD", "POST"], name="similar")]
