"""The site's URL forms: canonical paper paths and slugs, and absolute URLs."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.requests import Request

from papersift.paper import MAX_VERSION, Paper, parse_arxiv_id, version_number

SLUG_WORDS = 10
SLUG_CHARS = 80
# A paper path after /papers/: an id (new or old style), optional version, optional slug,
# optional format suffix. The old-style id keeps its slash, as on arXiv.
_PAPER_PATH = re.compile(
    r"^(?:arxiv:)?(?P<id>\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})"
    r"(?P<v>v\d+)?(?:-(?P<slug>[a-z0-9-]*))?(?P<ext>\.bib|\.md)?/?$",
    re.IGNORECASE,
)
_TEX_COMMAND = re.compile(r"\\[a-zA-Z]+")


def slugify(title: str) -> str:
    """``Zero Bubble $\\alpha$-Pipeline`` -> ``zero-bubble-alpha-pipeline``; ASCII, short."""
    text = _TEX_COMMAND.sub(lambda m: " " + m.group(0)[1:] + " ", title)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", text.lower())[:SLUG_WORDS]
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_CHARS:
            break
        slug = candidate
    return slug or "paper"


def paper_path(paper: Paper) -> str:
    """The canonical path of a paper's page: ``/papers/2401.10241-zero-bubble-...``."""
    return f"/papers/{paper.arxiv_id}-{slugify(paper.title)}"


@dataclass(frozen=True, slots=True)
class PaperPath:
    arxiv_id: str  # without version
    version: int | None
    slug: str | None
    ext: str  # "", ".bib" or ".md"
    raw: str


def parse_paper_path(rest: str) -> PaperPath | None:
    """Split what follows ``/papers/``; None if it names no arXiv id. Raises ParamError (a
    400) for an id whose version is out of range, such as ``2401.10241v99999999999``."""
    from server.params import ParamError

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


def arxiv_abs(arxiv_id: str, version: int | None = None) -> str:
    return f"https://arxiv.org/abs/{arxiv_id}" + (f"v{version}" if version else "")


VERSION_LINKS = 12  # a paper page links at most this many versions, then "all N"


def version_links(paper: Paper) -> list[tuple[str, str]]:
    """(label, URL) of the versions a paper page links: all of a few, else the first and the
    latest ones and a link to arXiv's page, which lists them all. Bounded whatever the
    stored version (ingest bounds it too: ``papersift.paper.MAX_VERSION``)."""
    n = paper.version
    if n <= VERSION_LINKS:
        return [(f"v{v}", arxiv_abs(paper.arxiv_id, v)) for v in range(1, n + 1)]
    shown = [1, *range(n - VERSION_LINKS + 2, n + 1)]
    links = [(f"v{v}", arxiv_abs(paper.arxiv_id, v)) for v in shown]
    links.insert(1, (f"… all {n:,} versions", arxiv_abs(paper.arxiv_id)))
    return links


def arxiv_pdf(arxiv_id: str) -> str:
    return f"https://arxiv.org/pdf/{arxiv_id}"


# A Host header we put into links: a DNS name or an IP literal, and a port. Anything else
# (markup, spaces, a path) falls back to the address `serve` listens on.
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
    r"[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?\Z"
)


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


def researcher_path(name: str) -> str:
    """Where an author name links until researcher pages exist: the researcher filter."""
    return "/search?" + urlencode({"researcher": name})


def category_path(category: str) -> str:
    return f"/categories/{category}"


def category_feed(category: str) -> str:
    return f"/rss/{category}.xml"


LATEST_FEED = "/rss/latest.xml"
