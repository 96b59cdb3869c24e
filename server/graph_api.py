"""The API of the paper graph and of "papers like this text": a paper's references and
citations in this index, as search result pages, and ``POST /api/v1/similar``.

``/api/v1/papers/<id>/references`` is the search ``citedby:<id>`` and ``/citations`` the
search ``cites:<id>`` (with any further query, filters, sort and paging of a search), so
their pages, hits and ``next`` links are exactly the search API's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from papersift.core.config_search import SearchConfig
from papersift.core.errors import WindowError
from papersift.engine.list_page import window_page
from papersift.engine.results import Filters, SearchResult
from papersift.server import views
from papersift.server.api import named, search_page
from papersift.server.context import ctx
from papersift.server.graph_views import GRAPH_QUERY, SimilarRequest, graph_query
from papersift.server.params import (
    MAX_FILTER_VALUES,
    MAX_RESEARCHER_LENGTH,
    ParamError,
    check_dates,
    clean_text,
    parse_date,
    parse_search,
    window_error,
)
from papersift.server.templating import json_response
from papersift.server.urls import parse_paper_path, site_root


async def paper_list(request: Request, which: str) -> Response:
    rest: str = request.path_params["rest"]
    parsed = parse_paper_path(rest)
    if parsed is None or parsed.slug is not None or parsed.ext:
        raise ParamError(
            "id", f"{rest[:100]!r} is not an arXiv id such as 2401.10241 or cmp-lg/9405001."
        )
    c = ctx(request)
    req = parse_search(
        request.query_params, c.config.search, strict=True,
        known_categories=await c.known_categories(), window=False,  # as the search API
        known_institution=c.engine.holds_institution,
    )  # fmt: skip
    found = await c.call(c.engine.paper, parsed.arxiv_id)
    if found is None:
        raise HTTPException(404, f"There is no paper {parsed.arxiv_id} in this index.")
    req = replace(req, query=graph_query(found, which, req.query))
    result, names = await c.call(named, c.engine, views.list_page, c.engine, req, c.config.search)
    page = search_page(result, site_root(request), c.config.search.max_window, names)
    return json_response(request, page)


def body_limit(max_text: int) -> int:
    """Bytes a schema-valid similar-text body may have: the text at its longest, every
    character escaped as a surrogate pair (``\\uXXXX\\uXXXX``, 12 bytes: JSON Schema counts a
    character outside the BMP once), plus the filters at theirs (20 names of 200 such
    characters, 48 KB)."""
    return 12 * max_text + 65_536


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, or a 413 as soon as it passes ``limit`` bytes."""
    size = int(request.headers.get("content-length") or 0)
    if size > limit:
        raise HTTPException(413, f"The body has {size:,} bytes; the limit is {limit:,}.")
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise HTTPException(413, f"The body is longer than {limit:,} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


def decode_json(raw: bytes) -> Any:
    """The body's JSON value; a ParamError when it is not JSON, is not UTF-8 (msgspec raises
    UnicodeDecodeError on a bad byte inside a string) or nests deeper than msgspec reads (a
    RecursionError: ~1,000 levels, far past any body of the schemas)."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ParamError("body", f"The body is not JSON: {exc}.") from None
    except UnicodeDecodeError:
        raise ParamError("body", f"The body is not valid UTF-8 ({_bad_byte(raw)}).") from None
    except RecursionError:
        raise ParamError("body", "The body nests arrays or objects too deeply.") from None


def _bad_byte(raw: bytes) -> str:
    """Where ``raw`` stops being UTF-8 (msgspec's own offset counts from the string's start)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte {exc.start:,} is {raw[exc.start]:#04x}; JSON must be sent as UTF-8"
    return "JSON must be sent as UTF-8"


DATE_EXPECTED = "a date such as 2024, 2024-05 or 2024-05-17"


def schema_error(exc: msgspec.ValidationError, expected: Mapping[str, str]) -> ParamError:
    """A body that does not fit its schema, naming the field at fault; a field that misses
    its pattern says what was expected (``expected``: field -> what), not the pattern."""
    text = str(exc)
    if m := re.search(r"missing required field `([^`]*)`", text):  # as ``body_error`` says it
        name = m.group(1)
        return ParamError(name, f"'{name}' is required: {expected.get(name, 'a value')}.")
    where = text.rsplit("at `$.", 1)
    name = where[1].split("`")[0].split("[")[0] if len(where) == 2 else "body"
    if "unknown field `" in text:
        name = text.split("unknown field `", 1)[1].split("`")[0]
    if "matching regex" in text:  # the pattern itself says little to a reader
        text = f"Expected {expected.get(name, 'another value')}, at `$.{where[-1]}"
    return ParamError(name, f"{text}.")


def _sent(value: Any) -> str:
    """A value of a JSON body for an error message: a string quoted as the search
    parameters' errors quote one, anything else as JSON; shortened."""
    shown = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    shown = shown if len(shown) <= 40 else shown[:40] + "…"
    return repr(shown) if isinstance(value, str) else shown


def invalid(name: str, accepted: str, value: Any) -> ParamError:
    """``'page_size' must be a whole number from 1 to 100, not 500.``, as search says it."""
    return ParamError(name, f"'{name}' must be {accepted}, not {_sent(value)}.")


def body_error(
    exc: msgspec.ValidationError,
    data: Any,
    struct: type[msgspec.Struct],
    accepted: Mapping[str, str],
) -> ParamError:
    """A body ``data`` that does not fit ``struct``, worded as the search parameters' errors
    are: the field at fault, what it accepts (``accepted``: field -> what) and the value
    sent, rather than msgspec's own words."""
    known = [f.encode_name for f in msgspec.structs.fields(struct)]
    if not isinstance(data, dict):
        return ParamError(
            "body", f"The body must be a JSON object with the fields {', '.join(known)}."
        )
    text = str(exc)
    if m := re.search(r"unknown field `([^`]*)`", text):
        name = m.group(1)
        return ParamError(name, f"Unknown field {_sent(name)}; known: {', '.join(known)}.")
    if m := re.search(r"missing required field `([^`]*)`", text):
        name = m.group(1)
        return ParamError(name, f"'{name}' is required: {accepted.get(name, 'a value')}.")
    m = re.search(r"at `\$\.([A-Za-z_]+)", text)
    name = m.group(1) if m else "body"
    return invalid(name, accepted.get(name, "another value"), data.get(name))


def similar_accepts(cfg: SearchConfig) -> dict[str, str]:
    """What each field of a similar-text body accepts, for its error messages."""
    return {
        "text": f"a string of 1 to {cfg.max_text_length:,} characters (an abstract or a paragraph)",
        "page": f"a whole number from 1 to {cfg.max_window}",
        "page_size": f"a whole number from 1 to {cfg.max_page_size}",
        "category": f"a list of at most {MAX_FILTER_VALUES} categories such as cs.IR or cs",
        "researcher": f"a list of at most {MAX_FILTER_VALUES} author names of at most "
        f"{MAX_RESEARCHER_LENGTH} characters",
        "from": DATE_EXPECTED,
        "to": DATE_EXPECTED,
    }


def similar_filters(body: SimilarRequest) -> Filters:
    date_from = parse_date("from", body.from_.strip(), end=False)
    date_to = parse_date("to", body.to.strip(), end=True)
    check_dates(date_from, date_to)
    return Filters(
        categories=tuple(c.strip() for c in body.category if c.strip()),
        researchers=tuple(r.strip() for r in body.researcher if r.strip()),
        date_from=date_from,
        date_to=date_to,
    )


async def similar(request: Request) -> Response:
    c = ctx(request)
    cfg = c.config.search
    raw = await read_body(request, body_limit(cfg.max_text_length))
    accepts = similar_accepts(cfg)
    data = decode_json(raw)
    if isinstance(data, dict):  # 5.0 is an integer to JSON Schema: so it is to us
        for key in ("page", "page_size"):
            if isinstance(data.get(key), float) and data[key].is_integer():
                data[key] = int(data[key])
    try:
        body = msgspec.convert(data, SimilarRequest)
    except msgspec.ValidationError as exc:
        raise body_error(exc, data, SimilarRequest, accepts) from None
    if len(body.text) > cfg.max_text_length:  # as sent: the documented maxLength
        raise ParamError(
            "text",
            f"'text' has {len(body.text):,} characters; the limit is {cfg.max_text_length:,}.",
        )
    text = clean_text(body.text)
    if not text:
        raise ParamError(
            "text", "'text' holds no words: paste an abstract or a paragraph to match."
        )
    size = body.page_size or cfg.page_size
    if size > cfg.max_page_size:
        raise invalid("page_size", accepts["page_size"], size)
    filters = similar_filters(body)

    def answer(page: int) -> SearchResult:
        return c.engine.similar_text(text, filters, page, body.page_size)

    try:  # past the window: the empty page after the last, as a search's, if the list ends
        result, names = await c.call(named, c.engine, window_page, answer, body.page, size, cfg)
    except WindowError:
        raise window_error(cfg.max_window, size, body.page) from None
    page = search_page(result, site_root(request), cfg.max_window, names, sortable=False)
    # The text is the caller's: not echoed back; a POST has no next URL (post page + 1).
    echo = msgspec.structs.replace(page.request, q="")
    out = msgspec.structs.replace(page, request=echo, next=None)
    return json_response(request, out, cache="no-store")


routes = [
    *(
        Route(f"/api/v1/papers/{{rest:path}}/{which}", partial(paper_list, which=which))
        for which in GRAPH_QUERY
    ),
    Route("/api/v1/similar", similar, methods=["POST"]),
]
