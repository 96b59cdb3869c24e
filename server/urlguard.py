"""A guard that turns a URL which is not UTF-8 once percent-decoded into a clear 400."""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from papersift.server import errors


def _valid_utf8(raw: bytes) -> bool:
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class UrlGuardMiddleware:
    """Reject a path or query string that is not UTF-8 once percent-decoded, or has NULs."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw_path: bytes = scope.get("raw_path") or str(scope["path"]).encode("utf-8", "replace")
            query: bytes = scope.get("query_string", b"")
            problem = None
            if not _valid_utf8(raw_path):
                problem = "The URL path is not valid UTF-8 once percent-decoded."
            elif not _valid_utf8(query.replace(b"+", b" ")):
                problem = "The query string is not valid UTF-8 once percent-decoded."
            elif b"%00" in raw_path or "\x00" in str(scope["path"]):
                problem = "The URL path contains a NUL character."
            if problem:
                response = errors.error_response(Request(scope), 400, problem)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
