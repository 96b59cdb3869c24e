"""The site's URL forms: canonical paper paths and slugs, and absolute URLs."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.requests import Request

from papersift.paper import Paper, parse_arxiv_id

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
    """Split what follows ``/papers/``; None if it names no arXiv id."""
    m = _PAPER_PATH.match(rest)
    if not m:
        return None
    parsed = parse_arxiv_id(m.group("id") + (m.group("v") or ""))
    if parsed is None:
        return None
    return PaperPath(parsed[0], parsed[1], m.group("slug"), (m.group("ext") or "").lower(), rest)


def arxiv_abs(arxiv_id: str, version: int | None = None) -> str:
    return f"https://arxiv.org/abs/{arxiv_id}" + (f"v{version}" if version else "")


def arxiv_pdf(arxiv_id: str) -> str:
    return f"https://arxiv.org/pdf/{arxiv_id}"


def site_root(request: Request) -> str:
    """Public base URL without a trailing slash: the configured one, else the request's."""
    configured: str = request.app.state.config.server.base_url
    if configured:
        return configured.rstrip("/")
    return str(request.base_url).rstrip("/")


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
