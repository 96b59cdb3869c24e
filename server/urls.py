"""URLs that need the request: parsing a paper path, the site's root and absolute links.

The URL forms themselves are built in ``papersift.core.urls``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from starlette.requests import Request

from papersift.core.paper import MAX_VERSION, Paper, parse_arxiv_id, version_number

# A paper path after /papers/: an id (new or old style), optional version, optional slug,
# optional format suffix. The old-style id keeps its slash, as on arXiv.
_PAPER_PATH = re.compile(
    r"^(?:arxiv:)?(?P<id>\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})"
    r"(?P<v>v\d+)?(?:-(?P<slug>[a-z0-9-]*))?(?P<ext>\.bib|\.md)?/?$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class PaperPath:
    arxiv_id: str  # without version
    version: int | None
    slug: str | None
    ext: str  # "", ".bib" or ".md"
    raw: str

    def missing_version(self, paper: Paper) -> int | None:
        """The version asked for when the index holds only older ones of ``paper`` (it is
        newer than the last harvest); None otherwise."""
        return self.version if self.version and self.version > paper.version else None


def parse_paper_path(rest: str) -> PaperPath | None:
    """Split what follows ``/papers/``; None if it names no arXiv id. Raises ParamError (a
    400) for an id whose version is out of range, such as ``2401.10241v99999999999``."""
    from papersift.server.params import ParamError

    m = _PAPER_PATH.match(rest)
    if not m:
        return None
    parsed = parse_arxiv_id(m.group("id") + (m.group("v") or ""))
    if parsed is None:
        if m.group("v") and version_number(m.group("v")[1:]) is None:
            raise ParamError(
                "version", f"An arXiv version is a number from 1 to {MAX_VERSION}, as in v2."
            )
        return None
    return PaperPath(parsed[0], parsed[1], m.group("slug"), (m.group("ext") or "").lower(), rest)


# A Host header we put into links: a DNS name or an IP literal, and a port. Anything else
# (markup, spaces, a path) falls back to the address `serve` listens on.
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
    r"[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?\Z"
)


def client_address(request: Request) -> str:
    """The client's address, the key its rate limits count under ("unknown" without one)."""
    return request.client.host if request.client else "unknown"


def site_root(request: Request) -> str:
    """Public base URL without a trailing slash: the configured one, else the request's if
    its Host header is a plain host[:port], else the address `serve` listens on."""
    server = request.app.state.config.server
    if server.base_url:
        return str(server.base_url).rstrip("/")
    if _HOST.match(request.headers.get("host", "")):
        return str(request.base_url).rstrip("/")
    host = "localhost" if server.host in ("", "0.0.0.0", "::") else server.host
    return f"http://{host}:{server.port}"


def shared_cache(request: Request) -> str:
    """``public`` when links are built from the configured base URL; ``private`` when they
    come from the request's Host header, so no shared cache hands one client's Host to
    others (feeds and sitemaps are cached for ``[feeds] max_age``)."""
    return "public" if request.app.state.config.server.base_url else "private"


def absolute(request: Request, path: str) -> str:
    return site_root(request) + path
