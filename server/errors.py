"""Every failure becomes a 4xx page or JSON error object; anything else a plain 500."""

from __future__ import annotations

import logging
from http import HTTPStatus

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from papersift.core.errors import QueryError
from papersift.engine.examples import Examples
from papersift.server.bodies import error_body
from papersift.server.context import AppContext
from papersift.server.headers import SECURITY_HEADERS
from papersift.server.markdown import md_text, wants_markdown
from papersift.server.params import ParamError
from papersift.server.schemas import ERROR_CODES
from papersift.server.templating import fresh_json, page_meta, render

log = logging.getLogger(__name__)

JSON_PREFIXES = ("/api/", "/openapi.json", "/healthz")

INTERNAL_ERROR_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Server error · papersift</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
</head><body><main><h1>Something went wrong</h1>
<p>The server could not answer this request. Please try again in a moment.</p>
<p><a href="/">Go to the home page</a></p></main></body></html>
"""


def wants_json(request: Request) -> bool:
    return request.url.path.startswith(JSON_PREFIXES)


def json_error(status: int, message: str, parameter: str | None = None) -> Response:
    """``{"error": {"status", "code", "message"[, "parameter"]}}`` - the API's one error shape
    (``server.schemas.Error``)."""
    return fresh_json(
        error_body(status, ERROR_CODES.get(status, "error"), message, parameter), status
    )


def _last_examples(request: Request) -> Examples:
    c: AppContext | None = getattr(request.app.state, "ctx", None)
    return c.last_examples() if c is not None else Examples()


def error_response(
    request: Request, status: int, message: str, parameter: str | None = None
) -> Response:
    if wants_json(request):
        return json_error(status, message, parameter)
    if wants_markdown(request):
        phrase = HTTPStatus(status).phrase
        text = f"# {status} {phrase}\n\n{md_text(message)}\n\nSee /llms.txt for the URL forms.\n"
        return PlainTextResponse(text, status, media_type="text/markdown; charset=utf-8")
    title = "Page not found" if status == 404 else HTTPStatus(status).phrase
    context = page_meta(
        request, title=title, description=message, path=request.url.path, robots="noindex"
    )
    context.update(
        status=status,
        message=message,
        parameter=parameter,
        query=request.query_params.get("q", "")[:200] if status != 404 else "",
        # Papers of this index to link (none until a guide has worked them out: an error
        # page never waits for the engine).
        examples=_last_examples(request),
    )
    return render(request, "error.html", context, status_code=status)


async def http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404 and exc.detail == HTTPStatus.NOT_FOUND.phrase:
        message = f"There is no page at {request.url.path[:200]}."
    elif exc.status_code == 405 and exc.detail == HTTPStatus.METHOD_NOT_ALLOWED.phrase:
        allowed = (exc.headers or {}).get("Allow", "")
        message = f"{request.method} is not allowed at {request.url.path[:200]}" + (
            f"; use {' or '.join(sorted(m.strip() for m in allowed.split(',')))}."
            if allowed
            else "."
        )
    else:
        message = str(exc.detail)
    response = error_response(request, exc.status_code, message)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def param_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ParamError)
    return error_response(request, 400, exc.message, exc.parameter)


async def query_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, QueryError)
    return error_response(request, 400, str(exc) or "The search cannot be answered as asked.")


async def client_gone(request: Request, exc: Exception) -> Response:
    """The client closed the connection before its whole body came: no one reads an answer,
    and nothing failed here (one log line, not a traceback)."""
    assert isinstance(exc, ClientDisconnect)
    log.info("%s %s: the client went away before its body came", request.method,
             request.url.path[:200])  # fmt: skip
    return Response(status_code=400)


async def server_error(request: Request, exc: Exception) -> Response:
    """The last resort: say nothing about the cause (it is logged by the server)."""
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-store"}
    if wants_json(request):
        response: Response = json_error(500, "Internal server error.")
        response.headers.update(headers)
        return response
    return HTMLResponse(INTERNAL_ERROR_PAGE, status_code=500, headers=headers)
